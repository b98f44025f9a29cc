//! The usage error: bad input the user can act on (exit code 2). Every layer may raise it.

/// Bad input: the user can act on it. Exits with code 2.
///
/// Its message is one line: what was wrong and what to do.
///
/// # Examples
///
/// ```
/// use lockbench::error::UsageError;
/// let e = UsageError("unknown lock \"tass\": `lockbench list` shows the names".into());
/// assert!(e.to_string().starts_with("unknown lock"));
/// ```
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The message a panic was raised with (`panic!("…")` with or without arguments), or `None`
/// for another payload. For code that catches panics and reports them.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Shorthand for a usage error.
///
/// # Examples
///
/// ```
/// use lockbench::error::{usage, UsageError};
/// fn threads(n: usize) -> Result<usize, UsageError> {
///     if n == 0 {
///         return usage("--threads 0: give at least 1");
///     }
///     Ok(n)
/// }
/// assert_eq!(threads(0).unwrap_err().to_string(), "--threads 0: give at least 1");
/// assert_eq!(threads(2).unwrap(), 2);
/// ```
pub fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}
