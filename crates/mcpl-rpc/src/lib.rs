//! Async JSON-RPC peer and transports for MCPL (being built: see issue "Foundation").
