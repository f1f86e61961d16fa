"""Hypothesis without its clocks: a busy machine makes examples slower, never wrong.

The suite runs beside other work (CI's 2 cores, `make test` twice at once); Hypothesis' deadline
and its too-slow health check measure that machine, not the code under test.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("toolwire", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolwire")
