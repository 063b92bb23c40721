//! The little HTTP/1.1 the connection workloads speak: `GET /bytes/<N>` requests, and
//! the heads of the responses.
//!
//! Owns: parsing request and response heads (capped at [`MAX_HEAD`] bytes, CRLF or
//! bare LF line ends), routing a request, and building heads.
//! Must not: do I/O, or allocate beyond the cap on anything the peer sends.

use std::net::SocketAddr;

/// Largest request or response head accepted (request line/status line + headers).
pub const MAX_HEAD: usize = 8192;

/// Largest object `/bytes/<N>` serves (1 TiB).
pub const MAX_OBJECT: u64 = 1 << 40;

/// Outcome of parsing the start of a buffer as a head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parse<T> {
    /// No blank line yet; read more.
    Partial,
    /// A head, and its length in bytes (blank line included).
    Done(T, usize),
    /// No blank line within [`MAX_HEAD`] bytes.
    TooLarge,
    /// Not HTTP/1.x.
    Malformed(&'static str),
}

/// Index just past the blank line that ends a head, if there is one.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            match buf.get(i + 1..) {
                Some([b'\n', ..]) => return Some(i + 2),
                Some([b'\r', b'\n', ..]) => return Some(i + 3),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Split a head into its first line and its headers (name, value), lines trimmed of
/// their CR. `None` if a header line has no colon.
fn split_head(head: &str) -> Option<(&str, Vec<(&str, &str)>)> {
    let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let first = lines.next()?;
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim(), value.trim()));
    }
    Some((first, headers))
}

/// Find the head in `buf` and hand it to `parse` as text.
fn parse_head<T>(buf: &[u8], parse: impl FnOnce(&str) -> Result<T, &'static str>) -> Parse<T> {
    let window = &buf[..buf.len().min(MAX_HEAD)];
    let Some(end) = head_end(window) else {
        return if buf.len() >= MAX_HEAD {
            Parse::TooLarge
        } else {
            Parse::Partial
        };
    };
    let Ok(text) = std::str::from_utf8(&buf[..end]) else {
        return Parse::Malformed("head is not UTF-8");
    };
    match parse(text) {
        Ok(v) => Parse::Done(v, end),
        Err(why) => Parse::Malformed(why),
    }
}

/// `HTTP/1.0` → 0, `HTTP/1.1` → 1.
fn http_minor(version: &str) -> Option<u8> {
    match version {
        "HTTP/1.1" => Some(1),
        "HTTP/1.0" => Some(0),
        _ => None,
    }
}

/// A request head, as much of it as the server needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    pub target: String,
    /// Minor HTTP version: 0 or 1.
    pub minor: u8,
    /// The client asked to close after the response (`Connection: close`, or HTTP/1.0
    /// without `keep-alive`).
    pub close: bool,
}

pub fn parse_request(buf: &[u8]) -> Parse<RequestHead> {
    parse_head(buf, |text| {
        let (line, headers) = split_head(text).ok_or("header line without a colon")?;
        let mut parts = line.split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("request line is not 'METHOD TARGET HTTP/1.x'");
        };
        let minor = http_minor(version).ok_or("not HTTP/1.0 or HTTP/1.1")?;
        if method.is_empty() || !target.starts_with('/') {
            return Err("request line is not 'METHOD TARGET HTTP/1.x'");
        }
        let (mut close, mut keep) = (false, false);
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("connection") {
                for token in value.split(',').map(str::trim) {
                    close |= token.eq_ignore_ascii_case("close");
                    keep |= token.eq_ignore_ascii_case("keep-alive");
                }
            }
        }
        Ok(RequestHead {
            method: method.to_string(),
            target: target.to_string(),
            minor,
            close: if minor == 1 { close } else { close || !keep },
        })
    })
}

/// What the built-in server does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// 200 with N pattern bytes.
    Bytes(u64),
    /// 404.
    NotFound,
    /// 405 (only GET is served).
    MethodNotAllowed,
}

pub fn route(req: &RequestHead) -> Route {
    if req.method != "GET" {
        return Route::MethodNotAllowed;
    }
    let path = req.target.split('?').next().unwrap_or("");
    let Some(n) = path.strip_prefix("/bytes/") else {
        return Route::NotFound;
    };
    // Plain decimal only: no sign, no spaces, no more digits than 2^40 has.
    if n.is_empty() || n.len() > 13 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return Route::NotFound;
    }
    match n.parse::<u64>() {
        Ok(v) if v <= MAX_OBJECT => Route::Bytes(v),
        _ => Route::NotFound,
    }
}

/// A response head; `content_length` pattern bytes follow it. With `close` it says so
/// (`Connection: close`); an HTTP/1.0 client that keeps the connection is told
/// `Connection: keep-alive`.
pub fn response_head(status: u16, content_length: u64, close: bool, minor: u8) -> Vec<u8> {
    head(
        status,
        content_length,
        "application/octet-stream",
        close,
        minor,
    )
}

/// A complete error response with a short text body.
pub fn error_response(status: u16, body: &str, close: bool, minor: u8) -> Vec<u8> {
    let mut r = head(status, body.len() as u64, "text/plain", close, minor);
    r.extend_from_slice(body.as_bytes());
    r
}

fn head(status: u16, content_length: u64, content_type: &str, close: bool, minor: u8) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let connection = match (close, minor) {
        (true, _) => "Connection: close\r\n",
        (false, 0) => "Connection: keep-alive\r\n",
        (false, _) => "",
    };
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Length: {content_length}\r\n\
         Content-Type: {content_type}\r\n{connection}\r\n"
    )
    .into_bytes()
}

/// The client's request for `n` bytes, closing after the response.
pub fn get_request(server: SocketAddr, n: u64) -> Vec<u8> {
    let host = match (server, server.port()) {
        (SocketAddr::V4(a), 80) => a.ip().to_string(),
        (SocketAddr::V6(a), 80) => format!("[{}]", a.ip()),
        (a, _) => a.to_string(),
    };
    format!("GET /bytes/{n} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").into_bytes()
}

/// A response head, as much of it as the client needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub content_length: Option<u64>,
}

pub fn parse_response(buf: &[u8]) -> Parse<ResponseHead> {
    parse_head(buf, |text| {
        let (line, headers) = split_head(text).ok_or("header line without a colon")?;
        let mut parts = line.splitn(3, ' ');
        let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
            return Err("status line is not 'HTTP/1.x CODE REASON'");
        };
        http_minor(version).ok_or("not HTTP/1.0 or HTTP/1.1")?;
        if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_digit()) {
            return Err("status code is not three digits");
        }
        let status = code
            .parse()
            .map_err(|_| "status code is not three digits")?;
        let mut content_length: Option<u64> = None;
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("content-length") {
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                    return Err("Content-Length is not a number");
                }
                let v = value.parse().map_err(|_| "Content-Length is too large")?;
                if content_length.is_some_and(|c| c != v) {
                    return Err("conflicting Content-Length headers");
                }
                content_length = Some(v);
            }
        }
        Ok(ResponseHead {
            status,
            content_length,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse` finds each of `heads` malformed.
    fn all_malformed<T: std::fmt::Debug>(parse: fn(&[u8]) -> Parse<T>, heads: &[&[u8]]) {
        for head in heads {
            let got = parse(head);
            assert!(
                matches!(got, Parse::Malformed(_)),
                "{:?}: {got:?}",
                String::from_utf8_lossy(head)
            );
        }
    }

    fn request(buf: &[u8]) -> (RequestHead, usize) {
        match parse_request(buf) {
            Parse::Done(r, n) => (r, n),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_a_curl_request() {
        let raw = b"GET /bytes/8388608 HTTP/1.1\r\nHost: 198.18.1.1:21000\r\n\
                    User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n";
        let (r, n) = request(raw);
        assert_eq!(n, raw.len());
        assert_eq!(r.method, "GET");
        assert_eq!(r.target, "/bytes/8388608");
        assert_eq!(r.minor, 1);
        assert!(!r.close, "HTTP/1.1 keeps the connection by default");
        assert_eq!(route(&r), Route::Bytes(8 << 20));
    }

    #[test]
    fn connection_header_and_version_decide_close() {
        let (r, _) = request(b"GET /bytes/1 HTTP/1.1\r\nConnection: Keep-Alive, Close\r\n\r\n");
        assert!(r.close);
        let (r, _) = request(b"GET /bytes/1 HTTP/1.0\r\n\r\n");
        assert!(r.close, "HTTP/1.0 closes unless asked to keep alive");
        let (r, _) = request(b"GET /bytes/1 HTTP/1.0\r\nconnection: keep-alive\r\n\r\n");
        assert!(!r.close);
        // Bare LF line ends, and a pipelined second request left over.
        let raw = b"GET /x HTTP/1.1\nHost: a\n\nGET /y HTTP/1.1\n\n";
        let (r, n) = request(raw);
        assert_eq!((r.target.as_str(), n), ("/x", 25));
    }

    #[test]
    fn partial_too_large_and_malformed_requests() {
        assert_eq!(
            parse_request(b"GET /bytes/1 HTTP/1.1\r\nHo"),
            Parse::Partial
        );
        assert_eq!(parse_request(b""), Parse::Partial);
        let mut big = b"GET /bytes/1 HTTP/1.1\r\n".to_vec();
        while big.len() < MAX_HEAD {
            big.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert_eq!(parse_request(&big), Parse::TooLarge);
        big.extend_from_slice(b"\r\n");
        assert_eq!(
            parse_request(&big),
            Parse::TooLarge,
            "the end lies past the cap"
        );
        all_malformed(
            parse_request,
            &[
                b"GET /bytes/1\r\n\r\n",
                b"GET /bytes/1 HTTP/2.0\r\n\r\n",
                b"GET bytes/1 HTTP/1.1\r\n\r\n",
                b"GET /bytes/1 HTTP/1.1\r\nNoColon\r\n\r\n",
                b"GET /\xff HTTP/1.1\r\n\r\n",
            ],
        );
    }

    #[test]
    fn routes() {
        let r = |m: &str, t: &str| {
            route(&RequestHead {
                method: m.into(),
                target: t.into(),
                minor: 1,
                close: false,
            })
        };
        assert_eq!(r("GET", "/bytes/0"), Route::Bytes(0));
        assert_eq!(r("GET", "/bytes/100?x=1"), Route::Bytes(100));
        assert_eq!(r("GET", "/bytes/1099511627776"), Route::Bytes(MAX_OBJECT));
        assert_eq!(r("GET", "/bytes/1099511627777"), Route::NotFound);
        assert_eq!(r("GET", "/bytes/99999999999999999999"), Route::NotFound);
        assert_eq!(r("GET", "/bytes/+5"), Route::NotFound);
        assert_eq!(r("GET", "/bytes/"), Route::NotFound);
        assert_eq!(r("GET", "/index.html"), Route::NotFound);
        assert_eq!(r("POST", "/bytes/5"), Route::MethodNotAllowed);
    }

    #[test]
    fn response_heads_are_exact() {
        assert_eq!(
            response_head(200, 42, false, 1),
            b"HTTP/1.1 200 OK\r\nContent-Length: 42\r\nContent-Type: application/octet-stream\r\n\r\n"
        );
        let closing = String::from_utf8(response_head(200, 0, true, 1)).unwrap();
        assert!(closing.ends_with("Connection: close\r\n\r\n"), "{closing}");
        let e = String::from_utf8(error_response(404, "not found\n", false, 1)).unwrap();
        assert!(
            e.starts_with("HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\n"),
            "{e}"
        );
        assert!(e.contains("Content-Type: text/plain\r\n"), "{e}");
        assert!(e.ends_with("\r\n\r\nnot found\n"), "{e}");
    }

    #[test]
    fn builds_the_client_request() {
        assert_eq!(
            get_request("127.0.0.1:41000".parse().unwrap(), 5),
            b"GET /bytes/5 HTTP/1.1\r\nHost: 127.0.0.1:41000\r\nConnection: close\r\n\r\n"
        );
        let v6 = String::from_utf8(get_request("[::1]:80".parse().unwrap(), 5)).unwrap();
        assert!(v6.contains("Host: [::1]\r\n"), "{v6}");
    }

    #[test]
    fn parses_response_heads() {
        let raw = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Length: 8388608\r\n\r\nbody";
        assert_eq!(
            parse_response(raw),
            Parse::Done(
                ResponseHead {
                    status: 200,
                    content_length: Some(8 << 20)
                },
                raw.len() - 4
            )
        );
        assert_eq!(
            parse_response(b"HTTP/1.1 404 Not Found\r\n\r\n"),
            Parse::Done(
                ResponseHead {
                    status: 404,
                    content_length: None
                },
                26
            )
        );
        assert_eq!(parse_response(b"HTTP/1.1 200 OK\r\n"), Parse::Partial);
        all_malformed(
            parse_response,
            &[
                b"ICY 200 OK\r\n\r\n",
                b"HTTP/1.1 2000 OK\r\n\r\n",
                b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            ],
        );
    }
}
