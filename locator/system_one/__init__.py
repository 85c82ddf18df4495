"""System One: the fast decision model behind the noul / choice / score wire contract."""
