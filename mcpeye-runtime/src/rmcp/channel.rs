//! The request context of a tool served through rmcp: an [`Origin`] built from rmcp's
//! `RequestContext` (client, `_meta`, session, progress token, log level, cancellation) and a
//! [`ClientChannel`] over its `Peer<RoleServer>`.
//!
//! Notifications (progress, logs) are queued by the handler, sync or async, and sent in order
//! by a pump that runs in the request's own task, beside the call: rmcp routes a notification
//! sent there to the request's stream (over Streamable HTTP, the POST's SSE stream), and the
//! pump is drained before the answer is sent, so none arrives after it.

// rmcp 3.11 deprecates MCP's logging and sampling ahead of SEP-2577; they are in MCP 2025-11-25,
// which clients speak, and are what handlers ask for.
#![allow(deprecated)]

use super::client::{Clients, MetaKeys, META_CLIENT_CAPABILITIES, META_LOG_LEVEL};
use super::session;
use super::task::TaskInput;
use crate::model::ask::Asking;
use crate::model::cancel::Cancellation;
use crate::model::client::{elicitation_supported, ClientChannel, ClientError, ClientFuture, LogLevel};
use crate::model::record::{DeferredParts, Origin};
use crate::ProgressToken;
use ::rmcp::model::{
    ClientCapabilities, ClientResult, CreateMessageRequestParams, ElicitRequestParams, InitializeRequestParams,
    InputRequest, ListRootsRequest, LoggingMessageNotificationParam, Notification, ProgressNotificationParam, Request,
    ServerNotification, ServerRequest,
};
use ::rmcp::service::{Peer, RequestContext, ServiceError};
use ::rmcp::RoleServer;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Poll, Waker};
use tokio::sync::{mpsc, oneshot};

enum Msg {
    Notify(Box<ServerNotification>),
    /// Answered once every message queued before it is sent.
    Flush(oneshot::Sender<()>),
}

/// The [`ClientChannel`] of one request served by rmcp.
pub(crate) struct RmcpChannel {
    peer: Peer<RoleServer>,
    queue: Mutex<Queue>,
    session: Option<session::Key>,
    /// The client's capabilities, as JSON, made from `source` when first asked for (by sampling
    /// or elicitation: most calls never ask).
    capabilities: OnceLock<Value>,
    source: Capabilities,
    /// The task the call runs as ([`call_as_task`](super::call_as_task)): its questions to the
    /// client are the task's input requests, not requests on the peer.
    task: Option<TaskInput>,
}

/// The notifications of one request. Most calls send none, so the channel and its pump are
/// made by the first message.
enum Queue {
    /// Nothing sent yet; the request's task, to wake when something is (from another thread).
    Unopened(Option<Waker>),
    /// Accepting messages; the receiver until the pump takes it.
    Open(mpsc::UnboundedSender<Msg>, Option<mpsc::UnboundedReceiver<Msg>>),
    /// Closed by the end of the call; the receiver if the pump has not taken it yet.
    Closed(Option<mpsc::UnboundedReceiver<Msg>>),
}

/// Where the client's capabilities are read from.
#[derive(Clone)]
enum Capabilities {
    /// The session's `initialize`.
    Session(Arc<InitializeRequestParams>),
    /// The request's `_meta` value (MCP 2026-07-28), if it has one.
    Meta(Option<Value>),
}

impl RmcpChannel {
    /// Stops accepting notifications: the pump sends what is queued, then ends.
    fn close(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        // The sender goes; a receiver not yet taken stays, with what was sent.
        let rx = match std::mem::replace(&mut *queue, Queue::Closed(None)) {
            Queue::Open(_, rx) | Queue::Closed(rx) => rx,
            Queue::Unopened(_) => None,
        };
        *queue = Queue::Closed(rx);
    }

    fn send(&self, msg: Msg) -> bool {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *queue {
            Queue::Open(tx, _) => tx.send(msg).is_ok(),
            Queue::Closed(_) => false,
            Queue::Unopened(waker) => {
                let waker = waker.take();
                let (tx, rx) = mpsc::unbounded_channel();
                let sent = tx.send(msg).is_ok();
                *queue = Queue::Open(tx, Some(rx));
                drop(queue);
                // The task starts the pump at its next poll.
                if let Some(w) = waker {
                    w.wake();
                }
                sent
            }
        }
    }

    /// The receiver, once something was sent, for the pump; until then `waiting` (the request's
    /// task, while its call runs) is kept to be woken by the first message.
    fn receiver(&self, waiting: Option<&Waker>) -> Option<mpsc::UnboundedReceiver<Msg>> {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *queue {
            Queue::Open(_, rx) | Queue::Closed(rx) => rx.take(),
            Queue::Unopened(kept) => {
                if let Some(w) = waiting {
                    if !kept.as_ref().is_some_and(|k| k.will_wake(w)) {
                        *kept = Some(w.clone());
                    }
                }
                None
            }
        }
    }

    fn notify(&self, kind: &str, params: Value) {
        let notification = match kind {
            "progress" => serde_json::from_value::<ProgressNotificationParam>(params)
                .map(|p| ServerNotification::ProgressNotification(Notification::new(p))),
            _ => serde_json::from_value::<LoggingMessageNotificationParam>(params)
                .map(|p| ServerNotification::LoggingMessageNotification(Notification::new(p))),
        };
        // Built from values of the right types: a failure here would be a bug, and is dropped.
        if let Ok(n) = notification {
            self.send(Msg::Notify(Box::new(n)));
        }
    }

    /// A future that completes once what is queued now has been sent.
    fn flushed(&self) -> impl Future<Output = ()> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let queued = self.send(Msg::Flush(tx));
        async move {
            if queued {
                let _ = rx.await;
            }
        }
    }

    fn capability(&self, key: &str) -> Option<&Value> {
        let capabilities = self.capabilities.get_or_init(|| {
            let json = match &self.source {
                Capabilities::Session(info) => serde_json::to_value(&info.capabilities).ok(),
                Capabilities::Meta(raw) => raw
                    .as_ref()
                    .and_then(|v| ClientCapabilities::deserialize(v).ok())
                    .and_then(|c| serde_json::to_value(c).ok()),
            };
            json.unwrap_or(Value::Null)
        });
        capabilities.get(key).filter(|v| !v.is_null())
    }

    fn request(&self, request: ServerRequest) -> ClientFuture {
        let peer = self.peer.clone();
        let flushed = self.flushed();
        Box::pin(async move {
            flushed.await;
            match peer.send_request(request).await {
                Ok(ClientResult::CreateMessageResult(r)) => serde_json::to_value(r).map_err(failed),
                Ok(ClientResult::ElicitResult(r)) => serde_json::to_value(r).map_err(failed),
                Ok(ClientResult::ListRootsResult(r)) => serde_json::to_value(r).map_err(failed),
                Ok(_) => Err(ClientError::Failed("the client answered with an unexpected result".to_owned())),
                Err(e) => Err(client_error(e)),
            }
        })
    }
}

fn failed(e: impl std::fmt::Display) -> ClientError {
    ClientError::Failed(e.to_string())
}

fn client_error(e: ServiceError) -> ClientError {
    match e {
        // rmcp refuses requests to the client on MCP 2026-07-28 with an invalid-request error.
        ServiceError::McpError(e) if e.message.contains("2026-07-28") => ClientError::Unsupported(e.message.into()),
        ServiceError::McpError(e) => ClientError::Rejected { code: i64::from(e.code.0), message: e.message.into() },
        ServiceError::Cancelled { .. } => ClientError::Cancelled,
        other => ClientError::Failed(other.to_string()),
    }
}

impl ClientChannel for RmcpChannel {
    fn progress(&self, token: &ProgressToken, progress: f64, total: Option<f64>, message: Option<&str>) {
        let mut params = json!({"progressToken": token.to_json(), "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.notify("progress", params);
    }

    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        let mut params = json!({"level": level.as_str(), "data": data});
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.notify("log", params);
    }

    fn session_log_level(&self) -> Option<LogLevel> {
        self.session.as_ref().and_then(session::log_level)
    }

    fn create_message(&self, params: Value) -> ClientFuture {
        if self.capability("sampling").is_none() {
            return unsupported("the client did not declare the `sampling` capability");
        }
        match serde_json::from_value::<CreateMessageRequestParams>(params) {
            Ok(p) => match &self.task {
                Some(task) => ask_in_task(task, "sampling", InputRequest::CreateMessage(Request::new(p))),
                None => self.request(ServerRequest::CreateMessageRequest(Request::new(p))),
            },
            Err(e) => Box::pin(std::future::ready(Err(ClientError::Failed(format!("invalid sampling request: {e}"))))),
        }
    }

    fn elicit(&self, params: Value) -> ClientFuture {
        let url = params.get("mode").and_then(Value::as_str) == Some("url");
        if let Err(e) = elicitation_supported(self.capability("elicitation"), url) {
            return Box::pin(std::future::ready(Err(e)));
        }
        match serde_json::from_value::<ElicitRequestParams>(params) {
            Ok(p) => match &self.task {
                Some(task) => ask_in_task(task, "elicitation", InputRequest::Elicitation(Request::new(p))),
                None => self.request(ServerRequest::ElicitRequest(Request::new(p))),
            },
            Err(e) => {
                Box::pin(std::future::ready(Err(ClientError::Failed(format!("invalid elicitation request: {e}")))))
            }
        }
    }

    fn list_roots(&self) -> ClientFuture {
        if self.capability("roots").is_none() {
            return unsupported("the client did not declare the `roots` capability");
        }
        self.request(ServerRequest::ListRootsRequest(ListRootsRequest::default()))
    }
}

/// A question asked as one of the task's input requests; a task cancelled before the client
/// answered ends the wait as a cancellation.
fn ask_in_task(task: &TaskInput, kind: &'static str, request: InputRequest) -> ClientFuture {
    let task = task.clone();
    Box::pin(async move { task.ask(kind, request).await.ok_or(ClientError::Cancelled) })
}

fn unsupported(why: &str) -> ClientFuture {
    Box::pin(std::future::ready(Err(ClientError::Unsupported(why.to_owned()))))
}

/// Sends the queued notifications, in order, until the channel is closed and drained.
async fn pump_messages(peer: Peer<RoleServer>, mut rx: mpsc::UnboundedReceiver<Msg>) {
    while let Some(msg) = rx.recv().await {
        match msg {
            // A client that went away cannot be told; the call still ends and is recorded.
            Msg::Notify(n) => {
                let _ = peer.send_notification(*n).await;
            }
            Msg::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// The parts of an rmcp request's [`Origin`] that only a handler asking for its
/// [`Context`](crate::Context) uses: the channel back to the client, the cancellation signal
/// (probing rmcp's request token) and the `_meta` object (with its progress token). The request's
/// context is kept instead, and they are built from it once, when first asked for
/// ([`Origin::resolved`]): most handlers never ask, and building them costs three allocations.
pub(crate) struct Deferred {
    state: Mutex<DeferredState>,
}

// Not boxed: boxing the request's context would cost the allocation that deferring saves.
#[allow(clippy::large_enum_variant)]
enum DeferredState {
    /// Not asked for yet: the request's context, which makes the parts.
    Pending(RequestContext<RoleServer>),
    MadeParts(MadeParts),
}

#[derive(Clone)]
struct MadeParts {
    channel: Arc<RmcpChannel>,
    cancellation: Cancellation,
    meta: Option<Arc<Map<String, Value>>>,
}

impl MadeParts {
    /// The parts for the request of `context`; its `_meta` moves into them.
    fn of(context: &mut RequestContext<RoleServer>) -> MadeParts {
        let keys = MetaKeys::of(&context.meta);
        let info = context.peer.peer_info();
        let session = session::key_with(context, info.as_ref(), keys.client_info);
        let source = match &info {
            Some(info) if session.is_some() => Capabilities::Session(info.clone()),
            _ if keys.client_capabilities => Capabilities::Meta(context.meta.get(META_CLIENT_CAPABILITIES).cloned()),
            _ => Capabilities::Meta(None),
        };
        let channel = Arc::new(RmcpChannel {
            peer: context.peer.clone(),
            queue: Mutex::new(Queue::Unopened(None)),
            session,
            capabilities: OnceLock::new(),
            source,
            task: context.extensions.get::<TaskInput>().cloned(),
        });
        let ct = context.ct.clone();
        // `_meta` serialises as the map it is, so the map is its JSON: taken, not copied (nothing
        // after this reads the context's `_meta`).
        let meta = match context.meta.is_empty() {
            true => None,
            false => Some(Arc::new(std::mem::take(&mut context.meta.0 .0))),
        };
        MadeParts { channel, cancellation: Cancellation::with_probe(move || ct.is_cancelled()), meta }
    }
}

impl Deferred {
    fn state(&self) -> std::sync::MutexGuard<'_, DeferredState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn made(&self) -> MadeParts {
        let mut state = self.state();
        let made = match &mut *state {
            DeferredState::MadeParts(m) => return m.clone(),
            DeferredState::Pending(context) => MadeParts::of(context),
        };
        *state = DeferredState::MadeParts(made.clone());
        made
    }

    /// The channel, if a handler asked for it.
    fn made_channel(&self) -> Option<Arc<RmcpChannel>> {
        match &*self.state() {
            DeferredState::MadeParts(m) => Some(m.channel.clone()),
            DeferredState::Pending(_) => None,
        }
    }
}

impl DeferredParts for Deferred {
    fn channel(&self) -> Arc<dyn ClientChannel> {
        self.made().channel
    }

    fn cancellation(&self) -> Cancellation {
        self.made().cancellation
    }

    fn meta(&self) -> Option<Arc<Map<String, Value>>> {
        self.made().meta
    }

    fn cancelled(&self) -> Option<Option<String>> {
        let made = match &*self.state() {
            DeferredState::MadeParts(m) => m.cancellation.clone(),
            // What the signal would say: cancelled by its probe, without a reason.
            DeferredState::Pending(context) => return context.ct.is_cancelled().then_some(None),
        };
        made.is_cancelled().then(|| made.reason())
    }
}

/// The [`Origin`] of this rmcp request without its channel, cancellation and `_meta` (which
/// [`MadeParts::of`] makes). `keep_request`: the call's tracker runs `identify`, which reads the
/// request's `_meta` and HTTP head (see [`RequestExtra`](crate::model::record::RequestExtra)).
fn origin_without_parts(clients: &Clients, context: &RequestContext<RoleServer>, keep_request: bool) -> Origin {
    let keys = MetaKeys::of(&context.meta);
    let mut origin = clients.origin_with(context, context.peer.peer_info(), keys);
    if keys.log_level {
        origin.log_level = context.meta.get(META_LOG_LEVEL).and_then(Value::as_str).and_then(LogLevel::parse);
    }
    if keep_request {
        origin.request = Some(Arc::new(crate::model::record::RequestExtra::of(context)));
    }
    origin
}

/// The [`Origin`] of this rmcp request, with its channel back to the client and its
/// cancellation (rmcp's request token, probed). The context's `_meta` moves into the origin.
fn request_origin(
    clients: &Clients,
    context: &mut RequestContext<RoleServer>,
    keep_request: bool,
) -> (Origin, Arc<RmcpChannel>, Cancellation) {
    let mut origin = origin_without_parts(clients, context, keep_request);
    let MadeParts { channel, cancellation, meta } = MadeParts::of(context);
    origin.progress_token = meta.as_deref().and_then(Origin::progress_token_of);
    origin.meta = meta;
    origin.cancellation = Some(cancellation.clone());
    origin.channel = Some(channel.clone());
    (origin, channel, cancellation)
}

/// Like [`with_origin`] for a call that ends without awaiting (a manifest without async
/// tools): it runs at once, and what it gives is returned with, when it queued notifications,
/// the [`Pump`] that sends them (await its [`send`](Pump::send) before answering). No
/// cancellation is watched: the call ends before the request could be cancelled, and its signal
/// probes rmcp's. The channel, cancellation and `_meta` are built only if the call asks for its
/// context.
pub(crate) fn with_origin_now<F, T>(
    clients: &Clients,
    context: RequestContext<RoleServer>,
    keep_request: bool,
    call: F,
) -> (T, Option<Pump>)
where
    F: FnOnce(&Origin) -> T,
{
    // The origin is dropped at the end of this block, where it is (`drop(origin)` would copy it
    // first).
    let (out, channel) = {
        let mut origin = origin_without_parts(clients, &context, keep_request);
        let deferred = Arc::new(Deferred { state: Mutex::new(DeferredState::Pending(context)) });
        origin.deferred = Some(deferred.clone());
        let out = call(&origin);
        (out, deferred.made_channel())
    };
    let pump = channel.and_then(|channel| {
        channel.close();
        channel.receiver(None).map(|rx| Pump { channel, rx })
    });
    (out, pump)
}

/// The notifications a call of [`with_origin_now`] queued, to send. Two pointers: the future
/// that sends them (over a kilobyte) is made only when there are some, not moved with every
/// answer.
pub(crate) struct Pump {
    channel: Arc<RmcpChannel>,
    rx: mpsc::UnboundedReceiver<Msg>,
}

impl Pump {
    /// Sends the notifications, in order.
    pub(crate) async fn send(self) {
        pump_messages(self.channel.peer.clone(), self.rx).await
    }
}

/// Runs `call` with the [`Origin`] of this rmcp request, in this task: the call's notifications
/// are pumped beside it and drained before it returns, and the client's cancellation (rmcp's
/// request token) cancels the origin's signal. The context's `_meta` moves into the origin.
///
/// With `asking` (a round of MCP 2026-07-28), the call is stopped as soon as it waits with a
/// question the round has no answer for: `None`, and the caller answers `input_required`.
pub(crate) async fn with_origin<F, Fut, T>(
    clients: &Clients,
    context: &mut RequestContext<RoleServer>,
    asking: Option<Arc<Asking>>,
    keep_request: bool,
    call: F,
) -> Option<T>
where
    F: FnOnce(Origin) -> Fut,
    Fut: Future<Output = T>,
{
    let (mut origin, channel, cancellation) = request_origin(clients, context, keep_request);
    origin.asking = asking.clone();

    let mut call = pin!(async {
        let out = call(origin).await;
        channel.close();
        out
    });
    // Boxed, and made only for a call that sends something.
    let mut pump: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = None;
    let mut watch = pin!(context.ct.cancelled());
    let (mut out, mut signalled, mut stopped) = (None, false, false);
    std::future::poll_fn(|cx| {
        if out.is_none() && !stopped {
            match call.as_mut().poll(cx) {
                Poll::Ready(v) => out = Some(v),
                // The round ends here: the call is dropped with this function, unfinished.
                Poll::Pending if asking.as_ref().is_some_and(|a| a.has_pending()) => {
                    stopped = true;
                    channel.close();
                }
                // Cancelling the signal wakes the call, which then ends at its next poll.
                Poll::Pending if !signalled && watch.as_mut().poll(cx).is_ready() => {
                    signalled = true;
                    cancellation.cancel();
                }
                Poll::Pending => {}
            }
        }
        let running = out.is_none() && !stopped;
        if pump.is_none() {
            if let Some(rx) = channel.receiver(running.then(|| cx.waker())) {
                pump = Some(Box::pin(pump_messages(channel.peer.clone(), rx)));
            }
        }
        if pump.as_mut().is_some_and(|p| p.as_mut().poll(cx).is_ready()) {
            pump = None;
        }
        // The pump ends only once the call has ended and closed the channel; a call that sent
        // nothing has none (its channel, closed, has no receiver left).
        if pump.is_some() || running {
            return Poll::Pending;
        }
        Poll::Ready(out.take())
    })
    .await
}
