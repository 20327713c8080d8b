"""Control flow and grouping: tf.cond/case/while_loop (control_flow_ops) and
tf.scan/map_fn/foldl (functional_ops) over recorded bodies (bodies), NoOp/group/tuple
(control_ops), tf.py_func (script_ops) and TF1's graph utilities (graph_utils)."""
