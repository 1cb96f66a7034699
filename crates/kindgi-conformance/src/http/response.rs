//! Answers, and reading them off a stream.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The longest response head read (status line and headers).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The longest response body read (a hostile input may make a large one,
/// which a test wants to measure, not refuse).
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024 * 1024;

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// `Ok` when the answer's status is `status`; else why not, with the
    /// start of its body.
    pub(crate) fn expect_status(&self, status: u16) -> Result<(), String> {
        if self.status == status {
            return Ok(());
        }
        Err(format!(
            "expected status {status}, got {} with {}",
            self.status,
            shorten(&self.text(), 400)
        ))
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    ///
    /// # Errors
    ///
    /// The difference when the body isn't JSON.
    pub fn json(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| {
            format!(
                "expected a JSON body, got {} ({e})",
                shorten(&String::from_utf8_lossy(&self.body), 300)
            )
        })
    }

    /// The body as JSON, `Null` when it isn't JSON: for a test that
    /// compares what it got with what it wants either way.
    pub fn json_or_null(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text, lossily.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `text`, cut to about `max` characters.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// An answer that isn't HTTP, with `what` is wrong with it.
fn malformed(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// A read error, with where in the answer it happened.
fn broke(at: &str, e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("the connection broke {at}: {e}"))
}

/// Reads one final answer from `reader`, skipping interim (1xx) ones.
///
/// # Errors
///
/// When the stream ends before a complete answer, or the answer isn't
/// HTTP.
pub async fn read_response_from<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> io::Result<HttpResponse> {
    loop {
        let response = read_one_from(reader).await?;
        if !(100..200).contains(&response.status) {
            return Ok(response);
        }
    }
}

/// Reads one answer from `reader`, interim (1xx) ones included.
///
/// # Errors
///
/// As [`read_response_from`].
pub async fn read_one_from<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<HttpResponse> {
    let head = read_head(reader).await?;
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| malformed(format!("malformed status line {status_line:?}")))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let chunked =
        get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if (100..200).contains(&status) || status == 204 || status == 304 {
        Vec::new()
    } else if chunked {
        read_chunked(reader).await?
    } else if let Some(length) = get("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| malformed(format!("a malformed content-length {length:?}")))?;
        read_length(reader, length).await?
    } else {
        let mut body = Vec::new();
        (&mut *reader)
            .take(MAX_BODY_BYTES as u64)
            .read_to_end(&mut body)
            .await
            .map_err(|e| broke("in the answer's body", &e))?;
        body
    };
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

/// The head's bytes, up to and with the empty line that ends it.
async fn read_head<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let n = (&mut *reader)
            .take((MAX_HEAD_BYTES - head.len()) as u64)
            .read_until(b'\n', &mut head)
            .await
            .map_err(|e| broke("before an answer", &e))?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection closed without an answer",
            ));
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            return Ok(head);
        }
        if head.len() >= MAX_HEAD_BYTES {
            return Err(malformed("the answer's head is over 64 KiB".to_owned()));
        }
    }
}

/// A body of `length` bytes.
async fn read_length<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    length: usize,
) -> io::Result<Vec<u8>> {
    if length > MAX_BODY_BYTES {
        return Err(malformed("the answer's body is over 1 GiB".to_owned()));
    }
    let mut body = Vec::new();
    let read = (&mut *reader)
        .take(length as u64)
        .read_to_end(&mut body)
        .await
        .map_err(|e| broke("in the answer's body", &e))?;
    if read < length {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the answer's body ended after {read} of {length} bytes"),
        ));
    }
    Ok(body)
}

/// A chunked body, de-chunked; its trailer, if any, is read and dropped.
async fn read_chunked<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Vec<u8>> {
    let cut_short = || {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "a chunked body cut short".to_owned(),
        )
    };
    let mut body = Vec::new();
    loop {
        let line = body_line(reader).await?.ok_or_else(cut_short)?;
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| malformed(format!("a malformed chunk size {size_text:?}")))?;
        if size == 0 {
            return read_trailer(reader).await.map(|()| body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(malformed("the answer's body is over 1 GiB".to_owned()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader
            .read_exact(&mut body[start..])
            .await
            .map_err(|_| cut_short())?;
        let mut crlf = [0_u8; 2];
        reader
            .read_exact(&mut crlf)
            .await
            .map_err(|_| cut_short())?;
        if &crlf != b"\r\n" {
            return Err(malformed("a malformed chunked body".to_owned()));
        }
    }
}

/// The trailer fields after the last chunk, up to the empty line.
async fn read_trailer<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<()> {
    while let Some(line) = body_line(reader).await? {
        if line.trim().is_empty() {
            break;
        }
    }
    Ok(())
}

/// One line of a chunked body (a chunk's size, a trailer field); `None`
/// at the end of the stream.
async fn body_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Option<String>> {
    let mut line = String::new();
    let n = reader
        .read_line(&mut line)
        .await
        .map_err(|e| broke("in the answer's body", &e))?;
    Ok((n > 0).then_some(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(bytes: &[u8]) -> io::Result<HttpResponse> {
        let mut reader = tokio::io::BufReader::new(bytes);
        read_response_from(&mut reader).await
    }

    #[tokio::test]
    async fn dechunks() {
        let answer = read(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n")
            .await
            .expect("valid");
        assert_eq!(answer.body, b"abcde");
        assert!(
            read(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n")
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn skips_interim_answers_and_reads_no_body_of_a_204() {
        let answer = read(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
            .await
            .expect("valid");
        assert_eq!((answer.status, answer.body.len()), (204, 0));
    }

    #[tokio::test]
    async fn a_short_body_says_how_short() {
        let err = read(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab")
            .await
            .expect_err("short");
        assert_eq!(
            err.to_string(),
            "the answer's body ended after 2 of 5 bytes"
        );
    }
}
