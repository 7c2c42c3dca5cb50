"""What runs inside a jail: the worker, the fork server and the pictures code.

These modules are never imported from a mounted tree: the host reads their source and sends it
on a descriptor, and the jail's bootstrap registers it under these names. They use the
standard library only (torch and matplotlib only if the snippet or the zygote loaded them),
and nothing of the bot: ``lint-imports`` checks it.
"""
