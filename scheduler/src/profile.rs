//! Profiling hooks. With the `tracy` feature they feed tracy-client (0.19, Switchyard's
//! own client); with the `profiling` feature they also open scopes of the `profiling`
//! crate, which feed whichever profiler the engine enables in it (puffin, superluminal,
//! optick; for Tracy use the `tracy` feature: `profiling`'s Tracy backend is another
//! tracy-client version). Without either every call compiles to nothing.

/// A profiling zone that ends when dropped. Opened inside the crate with the `zone!` and
/// `zone_text!` macros, which also open a scope of the `profiling` crate with the
/// `profiling` feature.
///
/// Zones use static source locations (no allocation) and are opened only while a profiler
/// is connected; otherwise opening one is a single atomic load.
#[must_use]
pub(crate) struct Zone {
    #[cfg(feature = "tracy")]
    span: Option<tracy_client::Span>,
}

impl std::fmt::Debug for Zone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Zone")
    }
}

impl Zone {
    /// Opens a zone at a static location if a profiler is connected.
    #[cfg(feature = "tracy")]
    #[doc(hidden)]
    #[inline(always)]
    pub(crate) fn open(loc: &'static tracy_client::SpanLocation) -> Self {
        let span = if tracy_client::Client::is_connected() {
            tracy_client::Client::running().map(|c| c.span(loc, 0))
        } else {
            None
        };
        Zone { span }
    }

    /// A zone that records nothing (the `tracy` feature is off).
    #[cfg(not(feature = "tracy"))]
    #[doc(hidden)]
    #[inline(always)]
    pub(crate) fn none() -> Self {
        Zone {}
    }

    /// Attaches text to the zone: `write` fills a reused per-thread buffer and runs only
    /// while a profiler records this zone (no allocation in steady state).
    #[inline(always)]
    pub(crate) fn with_text(self, write: impl FnOnce(&mut String)) -> Self {
        #[cfg(feature = "tracy")]
        if let Some(s) = &self.span {
            thread_local!(static TEXT: std::cell::RefCell<String> = std::cell::RefCell::new(String::with_capacity(256)));
            TEXT.with_borrow_mut(|t| {
                t.clear();
                write(t);
                s.emit_text(t);
            });
        }
        #[cfg(not(feature = "tracy"))]
        let _ = write;
        self
    }
}

/// The [`Zone`] of a string literal (Tracy's, with the `tracy` feature).
#[cfg(feature = "tracy")]
macro_rules! open {
    ($name:literal) => {
        $crate::profile::Zone::open(tracy_client::span_location!($name))
    };
}

/// The [`Zone`] of a string literal (none: the `tracy` feature is off).
#[cfg(not(feature = "tracy"))]
macro_rules! open {
    ($name:literal) => {
        $crate::profile::Zone::none()
    };
}

/// A scope of the `profiling` crate (whichever profiler the engine enabled in it: puffin,
/// superluminal, optick, Tracy through its own client), with the `profiling` feature.
#[cfg(feature = "profiling")]
macro_rules! scope {
    ($name:literal) => {
        profiling::scope!($name);
    };
}

/// Nothing: the `profiling` feature is off.
#[cfg(not(feature = "profiling"))]
macro_rules! scope {
    ($name:literal) => {};
}

/// A zone named by a string literal, open until the end of the enclosing block:
/// `zone!("patch");`.
macro_rules! zone {
    ($name:literal) => {
        let _zone = $crate::profile::open!($name);
        $crate::profile::scope!($name);
    };
}

/// A zone with formatted text, formatted only while Tracy records it, open until the end
/// of the enclosing block: `zone_text!("cull", "view {}", label);`. (The `profiling`
/// crate's scope carries the name alone: no formatting per zone.)
macro_rules! zone_text {
    ($name:literal, $($fmt:tt)+) => {
        let _zone = $crate::profile::open!($name).with_text(|t| {
            let _ = std::fmt::Write::write_fmt(t, format_args!($($fmt)+));
        });
        $crate::profile::scope!($name);
    };
}

/// Plots a counter under a literal name: `plot!("draw calls", 12.0)`.
#[cfg(feature = "tracy")]
macro_rules! plot {
    ($name:literal, $value:expr) => {
        if tracy_client::Client::is_connected() {
            if let Some(c) = tracy_client::Client::running() {
                c.plot(tracy_client::plot_name!($name), $value);
            }
        }
    };
}

/// Plots a counter under a literal name: `plot!("draw calls", 12.0)`.
#[cfg(not(feature = "tracy"))]
macro_rules! plot {
    ($name:literal, $value:expr) => {
        let _ = $value;
    };
}

pub(crate) use {open, plot, scope, zone, zone_text};

/// Starts the profiler client (with the `tracy` feature; it then waits for a profiler to
/// connect, collecting nothing until one does). Idempotent.
#[inline(always)]
pub(crate) fn start() {
    #[cfg(feature = "tracy")]
    let _ = tracy_client::Client::start();
}

/// Starts the Tracy client (with the `tracy` feature) and waits until a profiler is
/// connected or `timeout` has passed: a capture started with the program then holds its
/// first frames too (the client collects nothing until a profiler connects). `true` once
/// one is connected; `false` on timeout, and at once in a build without the feature
/// (nothing could connect).
pub fn wait_for_profiler(timeout: std::time::Duration) -> bool {
    #[cfg(feature = "tracy")]
    {
        start();
        let until = std::time::Instant::now() + timeout;
        loop {
            if tracy_client::Client::is_connected() {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= until {
                return false;
            }
            std::thread::sleep((until - now).min(std::time::Duration::from_millis(10)));
        }
    }
    #[cfg(not(feature = "tracy"))]
    {
        let _ = timeout;
        false
    }
}

/// Puts a message on the profiler's timeline, only while one is connected (`text` is not
/// even formatted otherwise).
#[inline(always)]
pub(crate) fn message(text: impl FnOnce() -> String) {
    #[cfg(feature = "tracy")]
    if tracy_client::Client::is_connected() {
        if let Some(c) = tracy_client::Client::running() {
            c.message(&text(), 0);
        }
    }
    #[cfg(not(feature = "tracy"))]
    let _ = text;
}

/// Names the current thread in the profiler.
#[inline(always)]
pub(crate) fn thread_name(name: &str) {
    #[cfg(feature = "tracy")]
    if let Some(c) = tracy_client::Client::running() {
        c.set_thread_name(name);
    }
    #[cfg(feature = "profiling")]
    profiling::register_thread!(name);
    #[cfg(not(feature = "tracy"))]
    let _ = name;
}

thread_local! {
    /// Frame marks this thread emitted (tests check who marks frames).
    pub(crate) static MARKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Marks the end of a frame.
#[inline(always)]
pub(crate) fn frame_mark() {
    MARKS.with(|m| m.set(m.get() + 1));
    #[cfg(feature = "tracy")]
    if let Some(c) = tracy_client::Client::running() {
        c.frame_mark();
    }
    #[cfg(feature = "profiling")]
    profiling::finish_frame!();
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    #[test]
    fn waiting_for_a_profiler_ends_without_one() {
        // No profiler connects to a test: with the feature the wait ends at its timeout;
        // without it nothing could connect, so it ends at once instead of waiting 60 s.
        let timeout = Duration::from_millis(if cfg!(feature = "tracy") { 50 } else { 60_000 });
        let start = Instant::now();
        assert!(!super::wait_for_profiler(timeout));
        if cfg!(feature = "tracy") {
            assert!(start.elapsed() >= timeout);
        } else {
            assert!(start.elapsed() < timeout);
        }
    }
}
