//! The child side.
