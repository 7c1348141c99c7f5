//! Markdown summary for tickets (render --format md).
