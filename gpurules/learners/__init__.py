"""Device-agnostic learning loops; they talk to a backend only through its protocol."""
