//! Shared by the gateway's tests: a gateway on its own thread and runtime,
//! configured against a fake upstream on loopback.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::sync::Arc;

use vouch_server::{Gateway, ServerConfig};

pub const KEY: &str = "sk-upstream-canary-5c1f0a9e77d24b31";
pub const TOKEN: &str = "client-token-3b8e";

pub struct Running {
    pub url: String,
    pub gateway: Arc<Gateway>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

pub fn config(upstream: &str) -> ServerConfig {
    let mut c = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: upstream.to_owned(),
        contracts: concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/contracts").into(),
        ..ServerConfig::default()
    };
    c.timeouts.connect_ms = 500;
    c.timeouts.first_byte_ms = 1_000;
    c.timeouts.idle_ms = 400;
    c.timeouts.total_ms = 1_500;
    c.max_retry_wait_ms = 300;
    c
}

/// Start a gateway on its own thread and runtime.
pub fn start(config: ServerConfig, tokens: Vec<String>) -> Running {
    start_keyed(config, Some(KEY.to_owned()), tokens)
}

/// Start a gateway with this upstream key of the server's (or none).
pub fn start_keyed(config: ServerConfig, key: Option<String>, tokens: Vec<String>) -> Running {
    let (gateway, errors) = Gateway::new(config, key, tokens).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let gateway = Arc::new(gateway);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let g = Arc::clone(&gateway);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = vouch_server::serve(g, listener, async move {
                let _ = stopped.await;
            })
            .await;
        });
    });
    Running { url, gateway, _stop: stop }
}

impl Running {
    /// As SIGTERM: the gateway's `shutdown` resolves.
    pub fn shut_down(self) {
        let _ = self._stop.send(());
    }
}
