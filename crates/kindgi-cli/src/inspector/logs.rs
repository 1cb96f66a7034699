//! The pack service's log records, kept for the inspector: the last
//! [`KEEP`] in a ring, and each new one sent to every page that listens
//! (`GET /inspector/api/logs`, server-sent events).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

/// How many records the ring keeps.
pub(crate) const KEEP: usize = 1000;

/// The ring and its listeners.
#[derive(Debug)]
pub(crate) struct Logs {
    kept: Mutex<(u64, VecDeque<Value>)>,
    live: broadcast::Sender<Value>,
}

impl Default for Logs {
    fn default() -> Self {
        Self {
            kept: Mutex::new((0, VecDeque::with_capacity(KEEP))),
            live: broadcast::channel(256).0,
        }
    }
}

impl Logs {
    /// Keeps one record of generation `generation`, numbered `seq` in the
    /// order they came, and sends it to the listeners.
    pub(crate) fn push(&self, generation: u64, mut record: Value) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        kept.0 += 1;
        if let Some(fields) = record.as_object_mut() {
            fields.insert("seq".into(), kept.0.into());
            fields.insert("generation".into(), generation.into());
        } else {
            record =
                serde_json::json!({"seq": kept.0, "generation": generation, "message": record});
        }
        if kept.1.len() == KEEP {
            kept.1.pop_front();
        }
        kept.1.push_back(record.clone());
        // Sent under the lock, so a new listener sees each record once.
        let _ = self.live.send(record);
    }

    /// What is kept, and the records after it as they come.
    fn subscribe(&self) -> (Vec<Value>, broadcast::Receiver<Value>) {
        match self.kept.lock() {
            Ok(kept) => (kept.1.iter().cloned().collect(), self.live.subscribe()),
            Err(_) => (Vec::new(), self.live.subscribe()),
        }
    }

    /// An endless `text/event-stream` body: every kept record, then each
    /// new one, one `data:` event each; a comment every 15 s keeps it open.
    pub(crate) fn events(&self) -> EventBody {
        let (kept, mut live) = self.subscribe();
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        tokio::spawn(async move {
            for record in kept {
                if tx.send(event(&record)).await.is_err() {
                    return;
                }
            }
            loop {
                let next = tokio::time::timeout(std::time::Duration::from_secs(15), live.recv());
                let chunk = match next.await {
                    Ok(Ok(record)) => event(&record),
                    Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
                        Bytes::from(format!(": {n} records skipped\n\n"))
                    }
                    Ok(Err(broadcast::error::RecvError::Closed)) => return,
                    Err(_) => Bytes::from_static(b": still here\n\n"),
                };
                if tx.send(chunk).await.is_err() {
                    return;
                }
            }
        });
        EventBody { rx }
    }
}

fn event(record: &Value) -> Bytes {
    Bytes::from(format!("data: {record}\n\n"))
}

/// A body that sends what a channel gets, until its sender goes.
#[derive(Debug)]
pub(crate) struct EventBody {
    rx: mpsc::Receiver<Bytes>,
}

impl Body for EventBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;
    use serde_json::json;

    #[tokio::test]
    async fn keeps_the_last_records_and_streams_new_ones() {
        let logs = Logs::default();
        for n in 0..(KEEP + 5) {
            logs.push(1, json!({"message": format!("m{n}")}));
        }
        let (kept, _) = logs.subscribe();
        assert_eq!(kept.len(), KEEP);
        assert_eq!(kept[0]["message"], "m5");
        assert_eq!(kept[0]["seq"], 6);

        let logs = Logs::default();
        logs.push(2, json!({"message": "first", "requestId": "r1"}));
        let mut body = logs.events();
        let first = body.frame().await.expect("frame").expect("ok");
        assert_eq!(
            first.into_data().expect("data"),
            "data: {\"generation\":2,\"message\":\"first\",\"requestId\":\"r1\",\"seq\":1}\n\n"
        );
        logs.push(3, json!("plain"));
        let second = body.frame().await.expect("frame").expect("ok");
        assert_eq!(
            second.into_data().expect("data"),
            "data: {\"generation\":3,\"message\":\"plain\",\"seq\":2}\n\n"
        );
    }
}
