"""Reports: findings as text (`text.py`), SARIF 2.1.0 (`sarif.py`) and baselines (`baseline.py`)."""
