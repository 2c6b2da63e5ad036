//! User-defined functions in queries: placeholder, filled in below.
