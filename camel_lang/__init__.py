"""`python -m camel_lang ...` runs the `camel` executable (see __main__.py)."""
