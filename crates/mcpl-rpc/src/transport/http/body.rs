//! Reading a request or response body under a size cap.

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mcpl_protocol::frame::FrameError;
use mcpl_protocol::jsonrpc::DecodeError;
use mcpl_protocol::sniff::SNIFF_BYTES;

/// Reads a body of at most `max` bytes. A longer one is refused by its declared length, or by
/// the bytes seen when the cap was passed (the rest is not read); its first bytes are read
/// either way so the refusal can carry the request's id.
pub(super) async fn read_capped<S, E>(
    mut body: S,
    max: usize,
    declared: Option<usize>,
) -> Result<Bytes, FrameError>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    if let Some(len) = declared.filter(|&len| len > max) {
        let mut prefix = Vec::new();
        while prefix.len() < SNIFF_BYTES {
            match body.next().await {
                Some(Ok(chunk)) => prefix.extend_from_slice(&chunk),
                _ => break,
            }
        }
        prefix.truncate(SNIFF_BYTES);
        return Err(FrameError::too_large(len, max, &prefix));
    }
    let mut buf = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| FrameError::Decode {
            error: DecodeError::Syntax(format!("body could not be read: {e}")),
            id: None,
            response: false,
        })?;
        buf.extend_from_slice(&chunk);
        if buf.len() > max {
            let prefix = &buf[..buf.len().min(SNIFF_BYTES)];
            return Err(FrameError::too_large(
                declared.unwrap_or(buf.len()),
                max,
                prefix,
            ));
        }
    }
    Ok(Bytes::from(buf))
}
