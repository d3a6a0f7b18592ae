"""Read models: what the services load and the views, capabilities and delivery serialize.
Plain data over domain types, below the services so that their readers need not import them."""
