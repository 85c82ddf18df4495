"""The AST structural lane (seed 001): bounded terms from a failure trace, bounded indexed searches
over a tree-sitter definitions index, owner-path ranking and one bounded owner excerpt, composed
with a base retrieval under one task source budget."""
