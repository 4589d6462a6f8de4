//! Who made the calls: the static [`Identity`] sent with every payload, and the per-call
//! [`CallIdentity`] of the `identify` callback.

use serde_json::Value;

/// Longest identity value kept, in characters (docs/wire-format.md#identity).
const MAX_IDENTITY_CHARS: usize = 256;

/// A value usable as an identity field: strings, integers, floats, booleans and JSON scalars.
/// Numbers are written as strings (the ingest requires strings); `null`, arrays and objects
/// give no value.
///
/// ```
/// use mcpeye::IdentityValue;
///
/// assert_eq!(42u64.into_identity_string().as_deref(), Some("42"));
/// assert_eq!(serde_json::json!("ada").into_identity_string().as_deref(), Some("ada"));
/// assert_eq!(serde_json::Value::Null.into_identity_string(), None);
/// ```
pub trait IdentityValue {
    /// The value as a string, or `None` for no value.
    ///
    /// ```
    /// use mcpeye::IdentityValue;
    /// assert_eq!(1.5f64.into_identity_string().as_deref(), Some("1.5"));
    /// assert_eq!(f64::NAN.into_identity_string(), None);
    /// ```
    fn into_identity_string(self) -> Option<String>;
}

impl IdentityValue for String {
    fn into_identity_string(self) -> Option<String> {
        Some(self)
    }
}
impl IdentityValue for &str {
    fn into_identity_string(self) -> Option<String> {
        Some(self.to_string())
    }
}
impl IdentityValue for &String {
    fn into_identity_string(self) -> Option<String> {
        Some(self.clone())
    }
}
impl IdentityValue for Value {
    fn into_identity_string(self) -> Option<String> {
        match self {
            Value::String(s) => Some(s),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Null | Value::Array(_) | Value::Object(_) => None,
        }
    }
}
impl IdentityValue for &Value {
    fn into_identity_string(self) -> Option<String> {
        self.clone().into_identity_string()
    }
}
impl<T: IdentityValue> IdentityValue for Option<T> {
    fn into_identity_string(self) -> Option<String> {
        self.and_then(IdentityValue::into_identity_string)
    }
}
macro_rules! identity_via_display {
    ($($t:ty),*) => {$(
        impl IdentityValue for $t {
            fn into_identity_string(self) -> Option<String> {
                Some(self.to_string())
            }
        }
    )*};
}
identity_via_display!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool);
impl IdentityValue for f64 {
    fn into_identity_string(self) -> Option<String> {
        self.is_finite().then(|| serde_json::Number::from_f64(self).map(|n| n.to_string())).flatten()
    }
}
impl IdentityValue for f32 {
    fn into_identity_string(self) -> Option<String> {
        f64::from(self).into_identity_string()
    }
}

/// Trims, drops blanks, cuts to 256 characters (docs/wire-format.md#identity).
pub(crate) fn normalize_identity(v: impl IdentityValue) -> Option<String> {
    let s = v.into_identity_string()?;
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    Some(match t.char_indices().nth(MAX_IDENTITY_CHARS) {
        Some((cut, _)) => t[..cut].to_string(),
        None if t.len() == s.len() => s,
        None => t.to_string(),
    })
}

/// Builder setters of identity fields, each normalised by [`normalize_identity`]: the two
/// identity types share their user fields and must treat them alike.
macro_rules! identity_setters {
    ($($(#[$doc:meta])* $field:ident;)*) => {$(
        $(#[$doc])*
        pub fn $field(mut self, v: impl IdentityValue) -> Self {
            self.$field = normalize_identity(v);
            self
        }
    )*};
}

/// The identity sent with every payload (`identity` on the wire). Values are trimmed; blank
/// ones are left out.
///
/// ```
/// let identity = mcpeye::Identity::new().user_id(42).server_version("1.2.3");
/// # drop(identity);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub(crate) user_id: Option<String>,
    pub(crate) user_email: Option<String>,
    pub(crate) client: Option<String>,
    pub(crate) server_version: Option<String>,
}

impl Identity {
    /// No identity.
    ///
    /// ```
    /// let config = mcpeye::Config::from_env("proj").identity(mcpeye::Identity::new().server_version("2.4.0"));
    /// # drop(config);
    /// ```
    pub fn new() -> Self {
        Identity::default()
    }
    identity_setters! {
        /// The user (`userId`); numbers are written as strings.
        ///
        /// ```
        /// let config = mcpeye::Config::new("proj").identity(mcpeye::Identity::new().user_id(42));
        /// # drop(config);
        /// ```
        user_id;
        /// The user's e-mail (`userEmail`; not redacted).
        ///
        /// ```
        /// let identity = mcpeye::Identity::new().user_email("ada@example.com");
        /// # drop(identity);
        /// ```
        user_email;
        /// The MCP client (`client`), e.g. `claude-desktop/1.0`.
        ///
        /// ```
        /// let identity = mcpeye::Identity::new().client("my-agent/0.3");
        /// # drop(identity);
        /// ```
        client;
        /// The version of this server (`serverVersion`).
        ///
        /// ```
        /// let identity = mcpeye::Identity::new().server_version(env!("CARGO_PKG_VERSION"));
        /// # drop(identity);
        /// ```
        server_version;
    }
}

/// Who made one call, as returned by a [`Config::identify`](crate::Config::identify) callback.
///
/// ```
/// use mcpeye::{CallIdentity, Config};
///
/// // The user named in the call's `account` argument.
/// let config = Config::new("proj").identify(|request| {
///     let account = request.arguments().get("account")?;
///     Some(CallIdentity::new().user_id(account.clone()).user_email(format!("{}@example.com", account.as_str()?)))
/// });
/// # drop(config);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallIdentity {
    pub(crate) user_id: Option<String>,
    pub(crate) user_email: Option<String>,
}

impl CallIdentity {
    /// No identity.
    ///
    /// ```
    /// assert_eq!(mcpeye::CallIdentity::new(), mcpeye::CallIdentity::default());
    /// ```
    pub fn new() -> Self {
        CallIdentity::default()
    }
    identity_setters! {
        /// The user (`userId`); numbers are written as strings.
        ///
        /// ```
        /// let who = mcpeye::CallIdentity::new().user_id(serde_json::json!(1042));
        /// # drop(who);
        /// ```
        user_id;
        /// The user's e-mail (`userEmail`; not redacted).
        ///
        /// ```
        /// let who = mcpeye::CallIdentity::new().user_email("ada@example.com");
        /// # drop(who);
        /// ```
        user_email;
    }
}
