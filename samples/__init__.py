"""The demo on the bundled samples (demo.py) and the docs pictures (pictures.py)."""
