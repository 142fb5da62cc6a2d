//! Profiling hooks. With the `tracy` feature they feed tracy-client; without it every call
//! compiles to nothing.

/// A profiling zone that ends when dropped.
#[must_use]
pub struct Zone {
    #[cfg(feature = "tracy")]
    _span: Option<tracy_client::Span>,
}

impl std::fmt::Debug for Zone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Zone")
    }
}

/// Starts the profiler client (with the `tracy` feature; it then waits for a profiler to
/// connect, collecting nothing until one does). Idempotent.
#[inline(always)]
pub fn start() {
    #[cfg(feature = "tracy")]
    let _ = tracy_client::Client::start();
}

/// Opens a zone named `name` on the current thread.
#[inline(always)]
pub fn zone(name: &'static str) -> Zone {
    #[cfg(feature = "tracy")]
    {
        let span = tracy_client::Client::running().map(|c| c.span_alloc(Some(name), "", file!(), line!(), 0));
        Zone { _span: span }
    }
    #[cfg(not(feature = "tracy"))]
    {
        let _ = name;
        Zone {}
    }
}

/// Opens a zone and attaches `text` (view, pass, chunk).
#[inline(always)]
pub fn zone_text(name: &'static str, text: impl FnOnce() -> String) -> Zone {
    #[cfg(feature = "tracy")]
    {
        let z = zone(name);
        if let Some(s) = &z._span {
            s.emit_text(&text());
        }
        z
    }
    #[cfg(not(feature = "tracy"))]
    {
        let _ = text;
        zone(name)
    }
}

/// Names the current thread in the profiler.
#[inline(always)]
pub fn thread_name(name: &str) {
    #[cfg(feature = "tracy")]
    if let Some(c) = tracy_client::Client::running() {
        c.set_thread_name(name);
    }
    #[cfg(not(feature = "tracy"))]
    let _ = name;
}

/// Marks the end of a frame.
#[inline(always)]
pub fn frame_mark() {
    #[cfg(feature = "tracy")]
    if let Some(c) = tracy_client::Client::running() {
        c.frame_mark();
    }
}

/// Plots a counter.
#[inline(always)]
pub fn plot(name: &'static str, value: f64) {
    #[cfg(feature = "tracy")]
    if let Some(c) = tracy_client::Client::running() {
        // Plot names must live forever: leak each distinct name once.
        static NAMES: std::sync::Mutex<Vec<(&'static str, tracy_client::PlotName)>> = std::sync::Mutex::new(Vec::new());
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        let plot = match names.iter().find(|(n, _)| *n == name) {
            Some((_, p)) => *p,
            None => {
                let p = tracy_client::PlotName::new_leak(name.to_string());
                names.push((name, p));
                p
            }
        };
        c.plot(plot, value);
    }
    #[cfg(not(feature = "tracy"))]
    let _ = (name, value);
}
