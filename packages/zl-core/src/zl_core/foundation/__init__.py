"""The foundation: errors and exit codes, atomic files, bounded calls, the Backend
descriptor and what decides a compiler's output. It imports nothing else of zl_core.
"""
