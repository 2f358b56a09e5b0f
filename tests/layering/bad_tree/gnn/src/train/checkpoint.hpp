// Fixture stub.
