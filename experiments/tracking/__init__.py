"""Speaking MLflow: the vocabulary loclab logs under (`vocabulary`: tag names, run kinds, metric
sections; `metric_keys`: a metric's key), the store and a sweep's parent run (`store`), the parent's
table and figure (`sweep_record`, `sweep_summary`), traces (`traces`), and the UI's landing view and
links (`ui`, `links`)."""
