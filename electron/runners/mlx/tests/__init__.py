import logging

# The runner logs every rejected task and fault on purpose; keep test output readable.
logging.getLogger("exobar").setLevel(logging.CRITICAL)
