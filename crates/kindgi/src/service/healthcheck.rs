//! `<pack> healthcheck`: asks the service running beside it whether it is
//! up, for a container's `HEALTHCHECK` (the pack's images have no shell
//! and no curl): `GET /healthz` on `127.0.0.1` (or `--host`) and `PORT`
//! (8080 when unset, as for `serve`), exit 0 on a 200, 1 with the reason
//! on stderr otherwise.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::process::ExitCode;
use std::time::Duration;

/// How long the whole check may take.
const WITHIN: Duration = Duration::from_secs(3);

/// Runs `healthcheck` with the arguments after it.
pub(crate) fn run(args: &[String]) -> ExitCode {
    match check(args, std::env::var("PORT").ok().as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("unhealthy: {problem}");
            ExitCode::FAILURE
        }
    }
}

/// The check itself: `Err` says why the service isn't healthy.
fn check(args: &[String], port: Option<&str>) -> Result<(), String> {
    let host = match args {
        [] => "127.0.0.1",
        [flag, host] if flag == "--host" => host.as_str(),
        _ => return Err("usage: <pack> healthcheck [--host H]".to_owned()),
    };
    let port = match port.map(str::parse::<u16>) {
        Some(Ok(port)) if port != 0 => port,
        Some(_) => {
            return Err(format!(
                "PORT must be a port number (1-65535) the service listens on, got {:?}",
                port.unwrap_or_default()
            ));
        }
        None => 8080,
    };
    let addr = resolve(host, port)?;
    let mut stream = TcpStream::connect_timeout(&addr, WITHIN)
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let _ = stream.set_read_timeout(Some(WITHIN));
    let _ = stream.set_write_timeout(Some(WITHIN));
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send to {addr}: {e}"))?;
    let mut answer = Vec::new();
    let _ = stream.take(4096).read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let status = text.lines().next().unwrap_or_default();
    match status.split(' ').nth(1) {
        Some("200") => Ok(()),
        Some(_) => Err(format!("GET /healthz on {addr} answered {status:?}")),
        None => Err(format!("GET /healthz on {addr} got no HTTP answer")),
    }
}

/// The first address `host` names.
fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| format!("cannot resolve {host:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn says_what_is_missing() {
        assert_eq!(
            check(&[], Some("0")),
            Err(
                "PORT must be a port number (1-65535) the service listens on, got \"0\"".to_owned()
            )
        );
        assert_eq!(
            check(&args(&["--port", "1"]), Some("8080")),
            Err("usage: <pack> healthcheck [--host H]".to_owned())
        );
    }

    #[test]
    fn a_closed_port_is_unhealthy() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let problem = check(&[], Some(&port.to_string())).expect_err("nothing listens");
        assert!(
            problem.starts_with(&format!("cannot connect to 127.0.0.1:{port}: ")),
            "{problem}"
        );
    }
}
