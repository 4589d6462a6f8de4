//! Cancellation of a call, independent of any async runtime: a [`Cancellation`] signal (set by
//! the client's `notifications/cancelled`, or by a tool's timeout) and the [`Sleep`] that times
//! a tool out, driven by one small timer thread shared by the process.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A signal that a call should stop: the client cancelled the request, or the tool's timeout
/// ran out. Cheap to clone (clones share the signal); usable from sync and async code, on any
/// async runtime.
///
/// Handlers see it through [`Context::is_cancelled`](crate::Context::is_cancelled) and
/// [`Context::cancelled`](crate::Context::cancelled). A serving layer cancels the signal it
/// put in the request's [`Origin`](crate::Origin):
///
/// ```
/// use mcpeye::Cancellation;
///
/// let signal = Cancellation::new();
/// let seen_by_handler = signal.clone();
/// assert!(!seen_by_handler.is_cancelled());
/// signal.cancel_with_reason("the user closed the window");
/// assert!(seen_by_handler.is_cancelled());
/// assert_eq!(seen_by_handler.reason().as_deref(), Some("the user closed the window"));
/// ```
#[derive(Clone)]
pub struct Cancellation {
    state: Arc<CancelSignal>,
}

impl Default for Cancellation {
    fn default() -> Self {
        Cancellation::of(CancelSignal::new(never, None))
    }
}

/// A source of cancellation that can only be polled.
type ProbeFn = dyn Fn() -> bool + Send + Sync;

struct CancelSignal<P: ?Sized = ProbeFn> {
    done: AtomicBool,
    inner: Mutex<LockedSignal>,
    parent: Option<Cancellation>,
    /// Checked by `is_cancelled` when the flag is not set: a source that can only be polled
    /// (rmcp's per-request token, while a synchronous tool runs), or [`never`]. Kept in the
    /// state's own allocation rather than boxed beside it (one allocation less per request).
    probe: P,
}

impl<P> CancelSignal<P> {
    fn new(probe: P, parent: Option<Cancellation>) -> Self {
        CancelSignal { done: AtomicBool::new(false), inner: Mutex::default(), parent, probe }
    }
}

/// The probe of a signal that has none.
fn never() -> bool {
    false
}

#[derive(Default)]
struct LockedSignal {
    reason: Option<String>,
    wakers: Vec<Waker>,
    children: Vec<Weak<CancelSignal>>,
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancellation").field("cancelled", &self.is_cancelled()).finish()
    }
}

impl Cancellation {
    /// A signal not yet cancelled.
    ///
    /// ```
    /// let signal = mcpeye::Cancellation::new();
    /// assert!(!signal.is_cancelled());
    /// ```
    pub fn new() -> Self {
        Cancellation::default()
    }

    /// A signal that also counts as cancelled whenever `probe` returns true (checked by
    /// [`is_cancelled`](Self::is_cancelled); a waiting future only wakes on [`cancel`](Self::cancel)).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))] // used by the rmcp integration
    pub(crate) fn with_probe(probe: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Cancellation::of(CancelSignal::new(probe, None))
    }

    fn of(state: CancelSignal<impl Fn() -> bool + Send + Sync + 'static>) -> Self {
        Cancellation { state: Arc::new(state) }
    }

    /// A signal cancelled with this one, and also on its own (a call's timeout).
    pub(crate) fn child(&self) -> Cancellation {
        let child = Cancellation::of(CancelSignal::new(never, Some(self.clone())));
        let mut inner = self.state.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.children.retain(|c| c.strong_count() > 0);
        inner.children.push(Arc::downgrade(&child.state));
        drop(inner);
        if self.state.done.load(Ordering::Acquire) {
            child.cancel_inner(self.reason());
        }
        child
    }

    /// Cancels, without a reason. Idempotent: the first reason given is kept.
    ///
    /// ```
    /// let signal = mcpeye::Cancellation::new();
    /// signal.cancel();
    /// assert!(signal.is_cancelled() && signal.reason().is_none());
    /// ```
    pub fn cancel(&self) {
        self.cancel_inner(None);
    }

    /// Cancels, saying why (kept only if the signal was not cancelled yet).
    ///
    /// ```
    /// let signal = mcpeye::Cancellation::new();
    /// signal.cancel_with_reason("client disconnected");
    /// signal.cancel_with_reason("ignored: already cancelled");
    /// assert_eq!(signal.reason().as_deref(), Some("client disconnected"));
    /// ```
    pub fn cancel_with_reason(&self, reason: impl Into<String>) {
        self.cancel_inner(Some(reason.into()));
    }

    fn cancel_inner(&self, reason: Option<String>) {
        let (wakers, children) = {
            let mut inner = self.state.inner.lock().unwrap_or_else(|e| e.into_inner());
            if self.state.done.swap(true, Ordering::AcqRel) {
                return;
            }
            inner.reason = reason;
            (std::mem::take(&mut inner.wakers), std::mem::take(&mut inner.children))
        };
        for w in wakers {
            w.wake();
        }
        let reason = self.reason();
        for child in children.iter().filter_map(Weak::upgrade) {
            Cancellation { state: child }.cancel_inner(reason.clone());
        }
    }

    /// Whether the call was cancelled.
    ///
    /// ```
    /// let signal = mcpeye::Cancellation::new();
    /// let handler_copy = signal.clone();
    /// signal.cancel();
    /// assert!(handler_copy.is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        if self.state.done.load(Ordering::Acquire) {
            return true;
        }
        if (self.state.probe)() {
            self.cancel();
            return true;
        }
        self.state.parent.as_ref().is_some_and(Cancellation::is_cancelled)
    }

    /// Why, when a reason was given.
    ///
    /// ```
    /// assert_eq!(mcpeye::Cancellation::new().reason(), None);
    /// ```
    pub fn reason(&self) -> Option<String> {
        let own = self.state.inner.lock().unwrap_or_else(|e| e.into_inner()).reason.clone();
        own.or_else(|| self.state.parent.as_ref().and_then(Cancellation::reason))
    }

    /// A future that completes when the signal is cancelled (at once if it already is). It owns
    /// a clone of the signal: `'static`, `Send`, runtime-independent.
    ///
    /// ```
    /// let signal = mcpeye::Cancellation::new();
    /// let waiter = signal.cancelled();
    /// std::thread::spawn(move || signal.cancel());
    /// mcpeye::testing::block_on(waiter); // returns once the other thread cancels
    /// ```
    pub fn cancelled(&self) -> Cancelled {
        Cancelled { signal: self.clone() }
    }
}

/// The future of [`Cancellation::cancelled`].
///
/// ```
/// use mcpeye::Cancellation;
///
/// let signal = Cancellation::new();
/// signal.cancel();
/// mcpeye::testing::block_on(signal.cancelled()); // ready at once: the signal is set
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Cancelled {
    signal: Cancellation,
}

impl Future for Cancelled {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let state = &self.signal.state;
        if self.signal.is_cancelled() {
            return Poll::Ready(());
        }
        let mut inner = state.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Checked again under the lock: `cancel` swaps the flag while holding it.
        if state.done.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if !inner.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            inner.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// A future that completes at a deadline, timed by one process-wide thread that is started the
/// first time a tool with a timeout is called.
pub(crate) struct Sleep {
    deadline: Instant,
    id: u64,
    registered: bool,
}

impl Sleep {
    pub(crate) fn new(after: Duration) -> Self {
        static IDS: AtomicU64 = AtomicU64::new(0);
        let deadline =
            Instant::now().checked_add(after).unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365));
        Sleep { deadline, id: IDS.fetch_add(1, Ordering::Relaxed), registered: false }
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            if self.registered {
                timer().remove(self.deadline, self.id);
                self.registered = false;
            }
            return Poll::Ready(());
        }
        timer().insert(self.deadline, self.id, cx.waker());
        self.registered = true;
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if self.registered {
            timer().remove(self.deadline, self.id);
        }
    }
}

/// Deadlines waiting, each with the waker of its future.
struct Timer {
    queue: Mutex<BTreeMap<(Instant, u64), Waker>>,
    changed: Condvar,
}

impl Timer {
    fn insert(&self, deadline: Instant, id: u64, waker: &Waker) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let earliest = q.keys().next().copied();
        q.insert((deadline, id), waker.clone());
        if earliest.is_none_or(|e| (deadline, id) < e) {
            self.changed.notify_one();
        }
    }

    fn remove(&self, deadline: Instant, id: u64) {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).remove(&(deadline, id));
    }

    fn run(&self) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let due: Vec<(Instant, u64)> = q.range(..(now, u64::MAX)).map(|(k, _)| *k).collect();
            let wakers: HashMap<_, _> = due.into_iter().filter_map(|k| q.remove(&k).map(|w| (k, w))).collect();
            if !wakers.is_empty() {
                drop(q);
                wakers.into_values().for_each(Waker::wake);
                q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            q = match q.keys().next().copied() {
                Some((deadline, _)) => {
                    self.changed
                        .wait_timeout(q, deadline.saturating_duration_since(now))
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => self.changed.wait(q).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let timer: &'static Timer = Box::leak(Box::new(Timer { queue: Mutex::default(), changed: Condvar::new() }));
        // If the thread cannot start, timeouts never fire; calls still end as their handlers do.
        let _ = std::thread::Builder::new().name("mcpeye-timer".into()).spawn(move || timer.run());
        timer
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: Future>(f: F) -> F::Output {
        struct UnparkThread(std::thread::Thread);
        impl std::task::Wake for UnparkThread {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(UnparkThread(std::thread::current())));
        let mut f = std::pin::pin!(f);
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
                return v;
            }
            std::thread::park();
        }
    }

    #[test]
    fn a_child_follows_its_parent_and_keeps_the_reason() {
        let parent = Cancellation::new();
        let child = parent.child();
        let other = parent.child();
        other.cancel_with_reason("timed out");
        assert!(other.is_cancelled() && !parent.is_cancelled() && !child.is_cancelled());
        let waiter = std::thread::spawn({
            let child = child.clone();
            move || block_on(child.cancelled())
        });
        parent.cancel_with_reason("the client asked");
        waiter.join().unwrap();
        assert_eq!(child.reason().as_deref(), Some("the client asked"));
        assert_eq!(other.reason().as_deref(), Some("timed out"));
        assert!(parent.child().is_cancelled(), "a child of a cancelled signal starts cancelled");
    }

    #[test]
    fn a_probe_counts_as_cancelled() {
        let flag = Arc::new(AtomicBool::new(false));
        let signal = Cancellation::with_probe({
            let flag = flag.clone();
            move || flag.load(Ordering::Relaxed)
        });
        let child = signal.child();
        assert!(!child.is_cancelled());
        flag.store(true, Ordering::Relaxed);
        assert!(child.is_cancelled());
    }

    #[test]
    fn sleeps_end_in_order_and_dropped_ones_are_forgotten() {
        let start = Instant::now();
        drop(Sleep::new(Duration::from_millis(1)));
        block_on(Sleep::new(Duration::from_millis(30)));
        assert!(start.elapsed() >= Duration::from_millis(30));
        block_on(Sleep::new(Duration::ZERO));
    }
}
