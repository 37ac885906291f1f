"""The adopter's own library (unrelated to opsweep)."""
