"""polyc's version: in every kernel's header comment and in the kernel cache's key."""
__version__ = "0.1.0"
