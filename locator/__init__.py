"""Localization algorithms, the contracts they share, and System One."""
