// placeholder: delete once this area has real sources
