"""octo/questions: questions per product, option or unit, answered per booking or per unit item."""
