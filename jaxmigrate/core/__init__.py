"""The data every layer shares: findings, fixes, edits."""
