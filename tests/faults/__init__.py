"""Fault injection against a real `manage.py serve`: see conftest.py for the harness."""
