//! Tracy zones inside the kernels, with the `tracy` feature: the phases of a sort or a
//! cull show in a capture under their own names (a zone opens only while a profiler is
//! connected). Without the feature a zone is nothing.

/// An open zone: closed when dropped.
#[must_use = "the zone ends when this is dropped"]
pub(crate) struct Zone {
    #[cfg(feature = "tracy")]
    _span: Option<tracy_client::Span>,
}

impl Zone {
    /// Opens a zone at `loc` while a profiler is connected.
    #[cfg(feature = "tracy")]
    #[inline]
    pub(crate) fn open(loc: &'static tracy_client::SpanLocation) -> Self {
        let span = tracy_client::Client::is_connected()
            .then(|| tracy_client::Client::running().map(|c| c.span(loc, 0)))
            .flatten();
        Self { _span: span }
    }

    /// Attaches text to the zone, formatted only while a profiler records it.
    #[inline]
    pub(crate) fn text(&self, _text: impl FnOnce() -> String) {
        #[cfg(feature = "tracy")]
        if let Some(span) = &self._span {
            span.emit_text(&_text());
        }
    }

    /// Attaches `text` to the zone while a profiler records it.
    #[inline]
    pub(crate) fn text_str(&self, _text: &str) {
        #[cfg(feature = "tracy")]
        if let Some(span) = &self._span {
            span.emit_text(_text);
        }
    }

    /// No zone (the `tracy` feature is off).
    #[cfg(not(feature = "tracy"))]
    #[inline]
    pub(crate) fn none() -> Self {
        Self {}
    }
}

/// A zone named by a string literal, open until the [`Zone`] is dropped:
/// `let _zone = zone!("merge");`.
#[cfg(feature = "tracy")]
macro_rules! zone {
    ($name:literal) => {
        $crate::profile::Zone::open(tracy_client::span_location!($name))
    };
}

/// Nothing: the `tracy` feature is off.
#[cfg(not(feature = "tracy"))]
macro_rules! zone {
    ($name:literal) => {
        $crate::profile::Zone::none()
    };
}

pub(crate) use zone;
