"""Variables and what writes them: VariableV2 and Assign*/Scatter* (state_ops), fused
optimizer updates (training_ops), initializers (init_ops), tables_initializer
(table_init)."""
