//! Serving plain clients over Streamable HTTP.
