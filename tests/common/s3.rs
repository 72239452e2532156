//! A real S3 server on loopback for the object storage tests: s3s-fs (the S3 implementation
//! of the s3s project over a folder of files, with conditional writes), run from its library
//! on a thread of the test process, so nothing is installed and nothing outlives the test.
//! `examples/s3-server.rs` runs the same server as a program, for the benches.

use std::net::TcpListener;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

use hyper_util::rt::TokioIo;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;

pub const ACCESS_KEY: &str = "flamesite";
pub const SECRET_KEY: &str = "flamesite-secret";

/// A server that stores its buckets as folders under a root folder; it stops when dropped.
pub struct Server {
    pub port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `root` (each folder in it a bucket) on 127.0.0.1:`port` (0: a free port). It
    /// listens before this returns, so a client may connect at once.
    pub fn start(root: &Path, port: u16) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("the S3 server's port is free");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let fs = s3s_fs::FileSystem::new(root).expect("s3s-fs opens its root folder");
        let mut service = S3ServiceBuilder::new(fs);
        service.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = service.build();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, is_ready) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("s3-server-{port}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    ready.send(()).unwrap();
                    let mut stopped = std::pin::pin!(stopped);
                    loop {
                        let socket = tokio::select! {
                            accepted = listener.accept() => match accepted {
                                Ok((socket, _)) => socket,
                                Err(_) => continue,
                            },
                            _ = &mut stopped => break,
                        };
                        let service = service.clone();
                        tokio::spawn(async move {
                            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(socket), service).await;
                        });
                    }
                });
                // Dropping the runtime ends the connections still open.
            })
            .unwrap();
        is_ready.recv().expect("the S3 server's thread starts");
        Server { port, stop: Some(stop), thread: Some(thread) }
    }

    /// Serves until the process ends (for the example program).
    #[allow(dead_code)]
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
