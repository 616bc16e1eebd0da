"""Fusion methods: several ranked lists per query into one."""
