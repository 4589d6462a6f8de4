//! What the `identify` callback sees of a call: its [`RequestInfo`], the request as the serving
//! layer knows it (tool, arguments, client, session, `_meta` and, over HTTP, the request's
//! head with what an auth middleware put in its extensions).

use crate::model::record::{ClientInfo, RequestExtra};
use serde_json::{Map, Value};

/// The request of one tool call, as [`Config::identify`](crate::Config::identify) sees it.
///
/// Over rmcp's Streamable HTTP server, [`http`](Self::http) is the HTTP request's head
/// (`http::request::Parts`, headers and extensions: what a tower auth layer inserted), so the
/// user can come from the authenticated request rather than from the arguments. Over stdio and
/// through [`Manifest::call`](crate::Manifest::call) there is no HTTP request: `http()` is
/// `None`.
///
/// ```
/// use mcpeye::{CallIdentity, ClientInfo, RequestInfo};
/// let args = serde_json::json!({"account": "acme"});
/// let client = ClientInfo::new("claude-code", "2.1");
/// let request = RequestInfo::new("search", &args).with_client(Some(&client)).with_session_id(Some("s-1"));
/// assert_eq!(request.tool_name(), "search");
/// assert_eq!(request.arguments()["account"], "acme");
/// assert_eq!(request.client().map(ClientInfo::name), Some("claude-code"));
/// assert_eq!(request.session_id(), Some("s-1"));
/// assert!(request.meta().is_none());
/// let id = CallIdentity::new().user_id(request.arguments().get("account").cloned());
/// # drop(id);
/// ```
#[derive(Clone, Copy)]
pub struct RequestInfo<'a> {
    tool_name: &'a str,
    arguments: &'a Value,
    client: Option<&'a ClientInfo>,
    session_id: Option<&'a str>,
    meta: Option<&'a Map<String, Value>>,
    extra: Option<&'a RequestExtra>,
}

impl<'a> RequestInfo<'a> {
    /// The request of a call of `tool_name` with `arguments`, with no client, session, `_meta`
    /// or HTTP request (add them with the `with_` methods).
    ///
    /// ```
    /// let args = serde_json::json!({"account": "acme"});
    /// let request = mcpeye::RequestInfo::new("invoice", &args);
    /// assert_eq!(request.arguments()["account"], "acme");
    /// ```
    pub fn new(tool_name: &'a str, arguments: &'a Value) -> Self {
        RequestInfo { tool_name, arguments, client: None, session_id: None, meta: None, extra: None }
    }

    /// The same request, from `client`.
    ///
    /// ```
    /// let client = mcpeye::ClientInfo::new("cursor", "1.2");
    /// let request = mcpeye::RequestInfo::new("invoice", &serde_json::Value::Null).with_client(Some(&client));
    /// assert_eq!(request.client().unwrap().name(), "cursor");
    /// ```
    pub fn with_client(mut self, client: Option<&'a ClientInfo>) -> Self {
        self.client = client;
        self
    }

    /// The same request, in session `session_id`.
    ///
    /// ```
    /// let request = mcpeye::RequestInfo::new("invoice", &serde_json::Value::Null).with_session_id(Some("s-1"));
    /// assert_eq!(request.session_id(), Some("s-1"));
    /// ```
    pub fn with_session_id(mut self, session_id: Option<&'a str>) -> Self {
        self.session_id = session_id;
        self
    }

    /// The same request, with `_meta` object `meta`.
    ///
    /// ```
    /// # use mcpeye::RequestInfo;
    /// let meta = serde_json::json!({"acme/user": "u-1"});
    /// let request = RequestInfo::new("search", &serde_json::Value::Null).with_meta(meta.as_object());
    /// assert_eq!(request.meta().unwrap()["acme/user"], "u-1");
    /// ```
    pub fn with_meta(mut self, meta: Option<&'a Map<String, Value>>) -> Self {
        self.meta = meta;
        self
    }

    /// The request of a call of `tool_name` with `arguments` from `origin`.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn of_origin(tool_name: &'a str, arguments: &'a Value, origin: &'a crate::Origin) -> Self {
        RequestInfo::new(tool_name, arguments)
            .with_client(origin.client.as_deref())
            .with_session_id(origin.session_id.as_deref())
            .with_meta(origin.meta.as_deref())
            .with_extra(origin.request.as_deref())
    }

    /// With what a serving layer kept of the request; its `_meta` wins over the origin's, which
    /// the serving layer may not have made yet.
    pub(crate) fn with_extra(mut self, extra: Option<&'a RequestExtra>) -> Self {
        if let Some(meta) = extra.and_then(|e| e.meta.as_ref()) {
            self.meta = Some(meta);
        }
        self.extra = extra;
        self
    }

    /// The tool called (as the client named it).
    ///
    /// ```
    /// assert_eq!(mcpeye::RequestInfo::new("invoice", &serde_json::Value::Null).tool_name(), "invoice");
    /// ```
    pub fn tool_name(&self) -> &'a str {
        self.tool_name
    }

    /// The call's arguments, without `mcpeyeIntent`, before redaction (`Null` when none).
    ///
    /// ```
    /// use mcpeye::{CallIdentity, Config};
    ///
    /// // The user named by the call's own arguments.
    /// let config = Config::new("proj").identify(|request| {
    ///     let user = request.arguments().get("user_id")?.clone();
    ///     Some(CallIdentity::new().user_id(user))
    /// });
    /// # drop(config);
    /// ```
    pub fn arguments(&self) -> &'a Value {
        self.arguments
    }

    /// The client that made the call (its `clientInfo`), when known.
    ///
    /// ```
    /// assert!(mcpeye::RequestInfo::new("invoice", &serde_json::Value::Null).client().is_none());
    /// ```
    pub fn client(&self) -> Option<&'a ClientInfo> {
        self.client
    }

    /// The call's session: the `Mcp-Session-Id` of Streamable HTTP, one id per stdio
    /// connection; `None` when the protocol has no session (MCP 2026-07-28).
    ///
    /// ```
    /// assert_eq!(mcpeye::RequestInfo::new("invoice", &serde_json::Value::Null).session_id(), None);
    /// ```
    pub fn session_id(&self) -> Option<&'a str> {
        self.session_id
    }

    /// The request's `params._meta` object, when it had one (for [`Manifest::call_from`], the
    /// origin's, see [`Origin::with_meta`](crate::Origin::with_meta)).
    ///
    /// [`Manifest::call_from`]: crate::Manifest::call_from
    ///
    /// ```
    /// use mcpeye::{CallIdentity, Config};
    ///
    /// // The user an upstream gateway put in the request's `_meta`.
    /// let config = Config::new("proj").identify(|request| {
    ///     let user = request.meta()?.get("com.example/user")?.as_str()?;
    ///     Some(CallIdentity::new().user_id(user))
    /// });
    /// # drop(config);
    /// ```
    pub fn meta(&self) -> Option<&'a Map<String, Value>> {
        self.meta
    }

    /// The HTTP request's head (method, URI, headers, extensions) over rmcp's Streamable HTTP
    /// server; `None` over stdio and for [`Manifest::call`](crate::Manifest::call).
    ///
    /// ```
    /// # use mcpeye::{CallIdentity, RequestInfo};
    /// // What an auth layer inserted into the request's extensions.
    /// #[derive(Clone)]
    /// struct Authenticated(String);
    /// fn who(request: &RequestInfo<'_>) -> Option<CallIdentity> {
    ///     let user = request.http()?.extensions.get::<Authenticated>()?;
    ///     Some(CallIdentity::new().user_id(user.0.as_str()))
    /// }
    /// assert!(who(&RequestInfo::new("search", &serde_json::Value::Null)).is_none());
    /// ```
    #[cfg(feature = "rmcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
    pub fn http(&self) -> Option<&'a http::request::Parts> {
        self.extra?.http.as_ref()
    }

    /// The value of HTTP header `name` of the request, when it has one that is valid text
    /// (`None` without an HTTP request).
    ///
    /// ```
    /// # use mcpeye::RequestInfo;
    /// assert_eq!(RequestInfo::new("search", &serde_json::Value::Null).header("x-user"), None);
    /// ```
    #[cfg(feature = "rmcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.http()?.headers.get(name)?.to_str().ok()
    }
}

impl std::fmt::Debug for RequestInfo<'_> {
    // The arguments and headers may hold secrets: only their shape is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestInfo")
            .field("tool_name", &self.tool_name)
            .field("client", &self.client)
            .field("session_id", &self.session_id)
            .field("has_meta", &self.meta().is_some())
            .finish_non_exhaustive()
    }
}

/// The per-call identity callback: given the call's [`RequestInfo`](crate::RequestInfo) (tool,
/// arguments without `mcpeyeIntent` and before redaction, client, session, `_meta`, the HTTP
/// request), says who made the call.
pub type IdentifyFn = dyn Fn(&RequestInfo<'_>) -> Option<crate::model::identity::CallIdentity> + Send + Sync;
