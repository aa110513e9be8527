//! Newline-delimited JSON over a byte stream (MCP stdio): one message per line.

use super::{Guard, Inbound, Transport, TransportKind};
use bytes::Bytes;
use mcpl_protocol::frame::{self, FrameError, Limits};
use mcpl_protocol::sniff::SNIFF_BYTES;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

impl Transport {
    /// Newline-delimited JSON over any reader and writer. A line over the size cap is skipped
    /// to the next newline and reported; the connection goes on.
    pub fn stdio_with<R, W>(reader: R, writer: W, limits: Limits) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        spawn(TransportKind::Stdio, reader, writer, limits)
    }
}

/// Spawns the reader and writer tasks of a line transport.
pub(super) fn spawn<R, W>(kind: TransportKind, reader: R, writer: W, limits: Limits) -> Transport
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = crate::transport::inbound_queue();
    let (out_tx, out_rx) = super::outbound_queue(super::OUTBOUND_CAPACITY);
    let reader_task = tokio::spawn(read_lines(reader, limits, in_tx.clone()));
    let writer_task = tokio::spawn(write_lines(writer, out_rx, in_tx));
    Transport {
        kind,
        limits,
        io: super::Io::Queues {
            inbound: in_rx,
            outbound: out_tx,
        },
        guard: Guard {
            writer: Some(writer_task),
            tasks: vec![reader_task],
            child: None,
        },
        stderr: None,
    }
}

/// Reads lines and hands each one over as a frame. A line longer than the cap is not buffered:
/// the reader skips to the next newline and reports its length, so one bad line costs one
/// error and the connection goes on.
pub(super) async fn read_lines<R: AsyncRead + Unpin>(
    reader: R,
    limits: Limits,
    tx: crate::transport::InboundSender,
) {
    let mut reader = BufReader::new(reader);
    let mut line: Vec<u8> = Vec::new();
    // While skipping an oversized line: how many bytes it has had so far.
    let mut skipped: Option<usize> = None;
    // The first bytes of the line being skipped, for the id of the error reply.
    let mut prefix: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) => buf,
            Err(e) => {
                let _ = tx
                    .send(Inbound::Closed {
                        reason: Some(format!("read failed: {e}")),
                    })
                    .await;
                return;
            }
        };
        if buf.is_empty() {
            // End of stream; a last line without its newline still counts.
            if skipped.is_none() && !is_blank(&line) {
                let _ = tx.send(Inbound::Frame(Bytes::from(line))).await;
            }
            let _ = tx.send(Inbound::Closed { reason: None }).await;
            return;
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        match skipped.as_mut() {
            Some(n) => *n += chunk.len(),
            None if line.len() + chunk.len() > limits.max_frame_bytes => {
                skipped = Some(line.len() + chunk.len());
                prefix = line;
                prefix.extend_from_slice(&chunk[..chunk.len().min(SNIFF_BYTES)]);
                prefix.truncate(SNIFF_BYTES);
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        let used = chunk.len() + usize::from(newline.is_some());
        reader.consume(used);
        if newline.is_none() {
            continue;
        }
        let inbound = match skipped.take() {
            Some(len) => Inbound::Refused {
                error: FrameError::too_large(
                    len,
                    limits.max_frame_bytes,
                    &std::mem::take(&mut prefix),
                ),
                answered: false,
            },
            None => {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if is_blank(&line) {
                    line.clear();
                    continue;
                }
                Inbound::Frame(Bytes::from(std::mem::take(&mut line)))
            }
        };
        if tx.send(inbound).await.is_err() {
            return;
        }
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Writes each message as one line, flushing after each so the other side sees it at once.
/// A write failure is reported as the connection closing.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: crate::transport::OutboundReceiver,
    tx: crate::transport::InboundSender,
) {
    while let Some(out) = rx.recv().await {
        // Compact JSON escapes newlines inside strings, so a message is always one line.
        let mut bytes = frame::encode(&out.message);
        bytes.push(b'\n');
        let written = async {
            writer.write_all(&bytes).await?;
            writer.flush().await
        };
        if let Err(e) = written.await {
            let _ = tx
                .send(Inbound::Closed {
                    reason: Some(format!("write failed: {e}")),
                })
                .await;
            return;
        }
    }
    let _ = writer.shutdown().await;
}
