//! The accept loop of the command's own HTTP servers (the dev front, the
//! inspector of `kindgi inspect`): each connection served as HTTP/1.1, or
//! as HTTP/2 over cleartext with prior knowledge (h2c), by `answer` on a
//! task of its own, until `shutdown` resolves.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

/// Serves `listener` with `answer` until `shutdown` resolves. A failed
/// accept (out of descriptors, say) is retried after a short pause.
pub(crate) async fn serve<A, F>(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    answer: A,
) where
    A: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<BoxBody<Bytes, hyper::Error>>> + Send + 'static,
{
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let answer = answer.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let answered = answer(request);
                async move { Ok::<_, Infallible>(answered.await) }
            });
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
