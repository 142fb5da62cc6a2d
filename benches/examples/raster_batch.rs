//! The raster limit's 8-corner cube drawn 1 to N cubes an instance: what a GPU's fixed
//! cost per instance adds to a mesh this small (`switchyard_benches::raster`).
//!
//! `cargo run --release -p switchyard-benches --example raster_batch -- [cubes] [iters]`

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let cubes: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let iters: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let raster = switchyard_benches::raster::Raster::new()?;
    println!("{} cubes at 1920x1080 on {}, GPU ms (median of {iters})", cubes, raster.adapter());
    println!("cubes/instance | lit | depth only");
    for per in [1, 2, 4, 8, 16, 32, 64, 128, 512] {
        let lit = raster.measure_batched(false, per, cubes, (1920, 1080), iters)?;
        let depth = raster.measure_batched(true, per, cubes, (1920, 1080), iters)?;
        println!("{per} | {lit:.3} | {depth:.3}");
    }
    use switchyard_benches::raster::CubeMesh;
    for mesh in CubeMesh::ALL {
        let ms = raster.measure(mesh, cubes, 1920, 1080, iters)?;
        println!("{}: {ms:.3}", mesh.name());
    }
    Ok(())
}
