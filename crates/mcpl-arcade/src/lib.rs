//! The arcade: the example MCPL games server.
//!
//! What will live here (issue "Arcade"): Go as an instanced toolset with a bot, games between
//! principals, a toolset without instances and an undeclared group, all on `mcpl-server`.
//! Nothing is built yet.
