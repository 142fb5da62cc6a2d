//! PNG line charts of throughput against threads, drawn with `plotters`; text uses the
//! DejaVu Sans font embedded by the `dejavu` crate, so no system font is needed.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (threads, value) points.
    pub points: Vec<(f64, f64)>,
}

const SIZE: (u32, u32) = (900, 480);

fn register_font() {
    static FONT: Once = Once::new();
    FONT.call_once(|| {
        // Only fails for bytes that are not a font; these are DejaVu Sans.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Writes a line chart of `series` (x: threads, log scale, a tick at each thread count)
/// to `path`.
pub fn line_chart(path: &std::path::Path, title: &str, unit: &str, series: &[Series]) -> Result<(), String> {
    register_font();
    let mut ticks: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let xmax = ticks.last().copied().unwrap_or(1.0).max(2.0);
    let ymax = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max).max(1e-9) * 1.1;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((1.0..xmax).log_scale().with_key_points(ticks), 0.0..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc(unit)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        // Throughput rises to the right: the upper left is where the lines are not.
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_png() {
        let path = std::env::temp_dir().join(format!("switchyard-chart-{}.png", std::process::id()));
        let s = [
            Series { name: "ours".into(), points: vec![(1.0, 10.0), (2.0, 19.0), (16.0, 120.0)] },
            Series { name: "baseline".into(), points: vec![(1.0, 8.0), (2.0, 12.0), (16.0, 30.0)] },
        ];
        line_chart(&path, "test chart", "Mthings/s", &s).unwrap();
        let img = image::open(&path).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), SIZE);
        // Lines and text were drawn: not every pixel is the white background.
        assert!(img.pixels().filter(|p| p.0 != [255, 255, 255]).count() > 1000);
        std::fs::remove_file(path).unwrap();
    }
}
