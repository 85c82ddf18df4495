"""Retrieval shared by the retrieval locators (bm25, embedding_retrieval, hybrid) and by
`locator/discovery=retrieval`: documents at file or definition level (`documents`), the query
(`query`), the ranking every retriever returns and its fusion (`ranking`), and the locator that
turns a ranking into a result (`locator`). Index work is charged as `index_lines`."""
