// Fixture stub (the layering check only needs it to exist).
