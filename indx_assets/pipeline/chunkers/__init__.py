"""The built-in chunkers, each a provider registered under the `indx.chunkers` entry-point group."""
