"""Compute backends behind one protocol (see ``gpurules.backends.base``)."""
