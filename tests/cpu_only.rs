//! A build without GPU backends (`default-features = false`), as a CPU-only user has it:
//! `Backend::Auto` runs on the CPU and says why, `Backend::Gpu` is a clear error, and the
//! queries work. scripts/test.sh runs it with `-p rectcast --no-default-features`; with a
//! backend compiled in, this file holds no test.
#![cfg(not(any(feature = "vulkan", feature = "metal", feature = "dx12")))]

use rectcast::{Backend, Batch, Engine, Error, Kind, Rect, Segment};

#[test]
fn without_gpu_backends_auto_runs_on_the_cpu_and_gpu_says_how_to_get_one() {
    assert!(wgpu::Instance::enabled_backend_features().is_empty());
    let mut engine = Engine::new(Backend::Auto).expect("Auto always opens");
    let chosen = engine.chosen().to_string();
    assert!(
        engine.gpu_context().is_none() && chosen.contains("without GPU backends"),
        "{chosen}"
    );
    let bullets = [Segment::new(-5.0, 2.0, 15.0, 8.0)];
    let boxes = [Rect::new(0.0, 0.0, 10.0, 10.0)];
    let first = engine.first_hit(&Batch::new(&bullets, &boxes)).unwrap();
    assert_eq!(
        (first[0].rect(), first[0].result.kind()),
        (Some(0), Kind::Cross)
    );
    match Engine::new(Backend::Gpu) {
        Err(e @ Error::NoAdapter(_)) => assert!(e.to_string().contains("`vulkan`"), "{e}"),
        Err(e) => panic!("expected NoAdapter, got {e}"),
        Ok(engine) => panic!(
            "a GPU opened in a build without backends: {}",
            engine.chosen()
        ),
    }
}
