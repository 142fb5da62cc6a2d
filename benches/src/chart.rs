//! PNG line charts of throughput against threads, with a tiny built-in bitmap font so no
//! system font is needed.

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (threads, value) points.
    pub points: Vec<(f64, f64)>,
}

const W: u32 = 720;
const H: u32 = 420;
const LEFT: u32 = 80;
const RIGHT: u32 = 230;
const TOP: u32 = 40;
const BOTTOM: u32 = 50;
const COLORS: [[u8; 3]; 6] =
    [[214, 39, 40], [31, 119, 180], [44, 160, 44], [255, 127, 14], [148, 103, 189], [140, 86, 75]];

/// 3x5 glyphs, one row per 3 bits, top row first.
fn glyph(c: char) -> [u8; 5] {
    match c.to_ascii_uppercase() {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        'A' => [2, 5, 7, 5, 5],
        'B' => [6, 5, 6, 5, 6],
        'C' => [7, 4, 4, 4, 7],
        'D' => [6, 5, 5, 5, 6],
        'E' => [7, 4, 6, 4, 7],
        'F' => [7, 4, 6, 4, 4],
        'G' => [7, 4, 5, 5, 7],
        'H' => [5, 5, 7, 5, 5],
        'I' => [7, 2, 2, 2, 7],
        'J' => [1, 1, 1, 5, 7],
        'K' => [5, 5, 6, 5, 5],
        'L' => [4, 4, 4, 4, 7],
        'M' => [5, 7, 7, 5, 5],
        'N' => [6, 5, 5, 5, 5],
        'O' => [7, 5, 5, 5, 7],
        'P' => [7, 5, 7, 4, 4],
        'Q' => [7, 5, 5, 7, 1],
        'R' => [6, 5, 6, 5, 5],
        'S' => [7, 4, 7, 1, 7],
        'T' => [7, 2, 2, 2, 2],
        'U' => [5, 5, 5, 5, 7],
        'V' => [5, 5, 5, 5, 2],
        'W' => [5, 5, 7, 7, 5],
        'X' => [5, 5, 2, 5, 5],
        'Y' => [5, 5, 2, 2, 2],
        'Z' => [7, 1, 2, 4, 7],
        '.' => [0, 0, 0, 0, 2],
        ',' => [0, 0, 0, 2, 4],
        '-' => [0, 0, 7, 0, 0],
        '_' => [0, 0, 0, 0, 7],
        '/' => [1, 1, 2, 4, 4],
        ':' => [0, 2, 0, 2, 0],
        '(' => [2, 4, 4, 4, 2],
        ')' => [2, 1, 1, 1, 2],
        '%' => [5, 1, 2, 4, 5],
        '+' => [0, 2, 7, 2, 0],
        _ => [0; 5],
    }
}

struct Canvas {
    img: image::RgbImage,
}

impl Canvas {
    fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as u32) < W && (y as u32) < H {
            self.img.put_pixel(x as u32, y as u32, image::Rgb(c));
        }
    }

    fn text(&mut self, x: i64, y: i64, s: &str, scale: i64, c: [u8; 3]) {
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if bits >> (2 - col) & 1 == 1 {
                        for dy in 0..scale {
                            for dx in 0..scale {
                                self.put(x + (i as i64 * 4 + col) * scale + dx, y + row as i64 * scale + dy, c);
                            }
                        }
                    }
                }
            }
        }
    }

    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: [u8; 3], width: i64) {
        let steps = ((x1 - x0).abs().max((y1 - y0).abs()) as i64).max(1);
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (x, y) = ((x0 + (x1 - x0) * t) as i64, (y0 + (y1 - y0) * t) as i64);
            for dy in -(width / 2)..=(width / 2) {
                for dx in -(width / 2)..=(width / 2) {
                    self.put(x + dx, y + dy, c);
                }
            }
        }
    }
}

fn fmt(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}K", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

/// Draws `series` (x: threads on a log2 axis, y: `unit`) to a PNG at `path`.
pub fn line_chart(path: &std::path::Path, title: &str, unit: &str, series: &[Series]) -> Result<(), String> {
    let mut c = Canvas { img: image::RgbImage::from_pixel(W, H, image::Rgb([255, 255, 255])) };
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    let (xmin, xmax) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x.log2()), b.max(x.log2())));
    let xspan = (xmax - xmin).max(1.0);
    let ymax = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max).max(1e-9) * 1.1;
    let (pw, ph) = (f64::from(W - LEFT - RIGHT), f64::from(H - TOP - BOTTOM));
    let px = |x: f64| f64::from(LEFT) + (x.log2() - xmin) / xspan * pw;
    let py = |y: f64| f64::from(TOP) + ph - y / ymax * ph;
    let grey = [120, 120, 120];
    c.text(i64::from(LEFT), 12, title, 2, [0, 0, 0]);
    c.line((f64::from(LEFT), f64::from(TOP)), (f64::from(LEFT), f64::from(TOP) + ph), grey, 1);
    c.line((f64::from(LEFT), f64::from(TOP) + ph), (f64::from(LEFT) + pw, f64::from(TOP) + ph), grey, 1);
    for k in 0..=4 {
        let y = ymax * f64::from(k) / 4.0;
        c.line((f64::from(LEFT) - 4.0, py(y)), (f64::from(LEFT), py(y)), grey, 1);
        c.text(4, py(y) as i64 - 5, &fmt(y), 2, grey);
    }
    let mut ticks: Vec<f64> = xs.clone();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    for &t in &ticks {
        c.line((px(t), f64::from(TOP) + ph), (px(t), f64::from(TOP) + ph + 4.0), grey, 1);
        c.text(px(t) as i64 - 4, i64::from(TOP) + ph as i64 + 8, &format!("{t}"), 2, grey);
    }
    c.text(i64::from(LEFT) + pw as i64 / 2 - 30, i64::from(H) - 18, "threads", 2, grey);
    c.text(i64::from(LEFT) + 8, i64::from(TOP) + 4, unit, 2, grey);
    for (i, s) in series.iter().enumerate() {
        let col = COLORS[i % COLORS.len()];
        for w in s.points.windows(2) {
            c.line((px(w[0].0), py(w[0].1)), (px(w[1].0), py(w[1].1)), col, 3);
        }
        for p in &s.points {
            c.line((px(p.0) - 3.0, py(p.1)), (px(p.0) + 3.0, py(p.1)), col, 5);
        }
        let ly = i64::from(TOP) + 10 + i as i64 * 20;
        let lx = i64::from(W - RIGHT) + 12;
        c.line((lx as f64, ly as f64 + 4.0), (lx as f64 + 14.0, ly as f64 + 4.0), col, 5);
        let name: String = s.name.chars().take(24).collect();
        c.text(lx + 20, ly, &name, 1, [0, 0, 0]);
    }
    c.img.save(path).map_err(|e| format!("{}: {e}", path.display()))
}
