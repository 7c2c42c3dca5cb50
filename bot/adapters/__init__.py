"""Platform adapters: each translates one chat platform to and from the neutral core."""
